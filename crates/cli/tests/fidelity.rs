//! `reanimator fidelity` as a user meets it: the tables, the JSON form
//! and the errors, on an original and timings traces written by the
//! format crate (no recording or replay needed).

use std::path::Path;
use std::process::{Command, Output};

use reanimator_trace::*;

fn run(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .arg("fidelity")
        .args(args)
        .output()
        .expect("run reanimator")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A trace by `recorder` with `options`, holding `(seq, nr, enter_ns,
/// exit_ns)` calls of thread 7.
fn write(path: &Path, recorder: &str, options: &[(&str, &str)], calls: &[(u64, u32, u64, u64)]) {
    let meta = TraceMeta {
        tool: "test".into(),
        recorder: recorder.into(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..TraceMeta::default()
    };
    let mut w = Writer::create(path, &meta, WriterOptions::default()).unwrap();
    for &(seq, nr, enter_ns, exit_ns) in calls {
        w.write(&Record::Syscall(SyscallEvent {
            seq,
            tgid: 7,
            tid: 7,
            nr,
            enter_ns,
            args: [0; 6],
            exit: Some(SyscallExit {
                exit_ns,
                ret: 0,
                is_error: false,
            }),
            captures: vec![],
        }))
        .unwrap();
    }
    w.finish().unwrap();
}

/// An original of three reads (10, 20, 30 µs) and an fsync (1 ms), and a
/// replay whose reads took 10 µs longer each, issued 0, -1, -5 and +2 µs
/// from their schedule.
fn sample(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (orig, rep) = (dir.join("orig.rtr"), dir.join("replay.rtr"));
    write(
        &orig,
        "ptrace",
        &[],
        &[
            (1, 0, 1_000, 11_000),
            (2, 0, 100_000, 120_000),
            (3, 0, 200_000, 230_000),
            (4, 74, 300_000, 1_300_000),
        ],
    );
    write(
        &rep,
        "replay",
        &[
            ("replay_of", "orig.rtr"),
            ("timing", "original"),
            ("order", "overlap"),
            ("trace_origin_ns", "1000"),
            ("replay_origin_ns", "50000000"),
        ],
        &[
            (1, 0, 50_000_000, 50_020_000),
            (2, 0, 50_098_000, 50_128_000),
            (3, 0, 50_194_000, 50_234_000),
            (4, 74, 50_301_000, 51_301_000),
        ],
    );
    (orig, rep)
}

#[test]
fn fidelity_prints_the_tables_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let (orig, rep) = sample(dir.path());
    let o = run(&[&orig, &rep]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}{}", out, text(&o.stderr));
    assert!(
        out.contains("4 calls returned") && out.contains("4 matched, 0 not in the original"),
        "{out}"
    );
    let read = out
        .lines()
        .find(|l| l.starts_with("read "))
        .expect("a read row");
    assert!(read.contains("+50.0"), "{read}");
    assert!(out.lines().any(|l| l.starts_with("all calls ")), "{out}");
    assert!(out.contains("u(R_w) from one replay"), "{out}");
    assert!(out.contains("issue-time error"), "{out}");
    assert!(out.contains("replay 1 (original): p50 "), "{out}");

    let o = Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .args(["fidelity", "--json", "--calls", "1"])
        .arg(&orig)
        .arg(&rep)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    // Every call in JSON whatever --calls says, the most original time
    // first.
    assert_eq!(v["calls"][0]["call"], "fsync");
    assert_eq!(v["calls"][1]["call"], "read");
    let read = &v["calls"][1];
    assert_eq!(read["n"], 3);
    assert_eq!(read["original"]["mean_ns"], 20_000.0);
    assert_eq!(read["replays"][0]["mean_ns"], 30_000.0);
    assert_eq!(read["replays"][0]["bias_pct"], 50.0);
    assert_eq!(
        read["metrology"]["precision_from"],
        "one replay (standard error of its mean)"
    );
    let r = &v["replays"][0];
    assert_eq!(r["matched"], 4);
    assert_eq!(r["speedup"], 1.0);
    assert_eq!(r["issue_error"]["error_us"]["p50"], -1.0);
    assert_eq!(r["issue_error"]["abs_us"]["max"], 5.0);
    assert_eq!(v["original"]["concurrency"]["levels"][0]["calls"], 4);

    let o = Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .args(["fidelity", "--calls", "1"])
        .arg(&orig)
        .arg(&rep)
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(out.contains("(1 more calls"), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("read ")), "{out}");
}

#[test]
fn fidelity_refuses_what_is_not_a_timings_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (orig, rep) = sample(dir.path());
    let o = run(&[&orig, &orig]);
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("orig.rtr: not a timings trace") && err.contains("--timings"),
        "{err}"
    );
    let o = run(&[&rep, &rep]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("not a recording"),
        "{}",
        text(&o.stderr)
    );
    let missing = dir.path().join("missing.rtr");
    let o = run(&[&orig, &missing]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("missing.rtr"),
        "{}",
        text(&o.stderr)
    );
    let corrupt = dir.path().join("corrupt.rtr");
    std::fs::write(&corrupt, b"REANIMTR but not really a trace").unwrap();
    let o = run(&[&orig, &corrupt]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("corrupt.rtr"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&[&orig]);
    assert!(!o.status.success(), "a replay is required");
    // One replay given twice would pass for two that agree.
    let again = dir.path().join("again.rtr");
    std::fs::hard_link(&rep, &again).unwrap();
    let o = run(&[&orig, &rep, &again]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("are the same file"),
        "{}",
        text(&o.stderr)
    );
    // The timings of a replay of another trace: nothing in common.
    let other = dir.path().join("other.rtr");
    write(
        &other,
        "ptrace",
        &[],
        &[(100, 0, 1_000, 2_000), (101, 1, 5_000, 6_000)],
    );
    let o = run(&[&other, &rep]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("none of its 4 events matches a call of"),
        "{}",
        text(&o.stderr)
    );
}

/// `python3 -c` checking that `file` is well-formed XML; python3 is on
/// every machine the tests run on, and its absence must not pass as
/// success.
fn assert_well_formed_xml(file: &Path) {
    let o = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])",
        ])
        .arg(file)
        .output()
        .expect("python3 is needed to check the SVG is well-formed XML");
    assert!(
        o.status.success(),
        "{} is not well-formed XML: {}",
        file.display(),
        text(&o.stderr)
    );
}

#[test]
fn fidelity_draws_the_report_as_svg() {
    let dir = tempfile::tempdir().unwrap();
    // Markup in the original's path must be escaped in the picture.
    let traces = dir.path().join("a&b<c>'d\"");
    std::fs::create_dir(&traces).unwrap();
    let (orig, rep) = sample(&traces);
    let svg = dir.path().join("out.svg");
    let plain = run(&[&orig, &rep]);
    let fidelity = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_reanimator"))
            .arg("fidelity")
            .args(extra)
            .arg(&orig)
            .arg(&rep)
            .arg("--svg")
            .arg(&svg)
            .output()
            .unwrap()
    };
    let o = fidelity(&[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        text(&plain.stdout),
        "stdout as without --svg"
    );
    assert!(
        text(&o.stderr).contains("out.svg: the fidelity report as a picture"),
        "{}",
        text(&o.stderr)
    );
    assert_well_formed_xml(&svg);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.starts_with("<?xml") && picture.contains("<svg"),
        "{picture}"
    );
    for word in ["read", "fsync", "original", "a&amp;b&lt;c&gt;&apos;d&quot;"] {
        assert!(picture.contains(word), "{word} missing from {picture}");
    }
    assert!(!picture.contains("<script"), "no scripts");

    // An existing picture is kept without --force.
    let o = fidelity(&[]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("out.svg: already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), picture);

    // With --force it is replaced, and --json is as without --svg.
    std::fs::write(&svg, "old").unwrap();
    let o = fidelity(&["--force", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("one JSON object");
    assert_well_formed_xml(&svg);

    // Never over a trace it is drawn from, even with --force.
    let o = Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .args(["fidelity", "--force"])
        .arg(&orig)
        .arg(&rep)
        .arg("--svg")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("must not overwrite a trace"),
        "{}",
        text(&o.stderr)
    );
}
