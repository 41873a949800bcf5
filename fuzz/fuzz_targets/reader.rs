//! Feeds arbitrary bytes to the trace reader and to recover: neither may
//! panic, hang or allocate without bound, whatever the input. Inputs that
//! start as valid traces (see `seed`) reach deep into frame decoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reanimator_trace::{recover, ReadOptions, Reader, WriterOptions};

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let input = dir.path().join("in.rtr");
    std::fs::write(&input, data).unwrap();
    for with_data in [false, true] {
        if let Ok(mut r) = Reader::open(&input, ReadOptions { data: with_data }) {
            while let Ok(Some(_)) = r.next_record() {}
        }
    }
    let out = dir.path().join("out.rtr");
    if recover(&input, &out, WriterOptions::default()).is_ok() {
        // What recover writes must always read back cleanly.
        let mut r = Reader::open(&out, ReadOptions { data: true }).expect("recovered trace opens");
        while let Some(rec) = r.next_record().expect("recovered trace reads") {
            let _ = rec;
        }
    }
});
