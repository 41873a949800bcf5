//! `stats`, `select`, `export` and dump's filters on real recordings:
//! figures checked against an independent count over `dump --json`,
//! selections against the filtered dump of the original, exports against
//! DuckDB and pyarrow (tests/python/check_export.py), and every command
//! against corrupt traces. Recording needs ptrace (root here); db_bench,
//! python3, duckdb and pyarrow come from scripts/install-deps.sh, and a
//! missing one fails the test loudly.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod common;
use common::{bin, program, require, show};

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run reanimator")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", show(&o));
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// Records `argv` in `work` into `trace`.
fn record(work: &Path, trace: &Path, argv: &[&str]) {
    let o = Command::new(bin())
        .current_dir(work)
        .args(["record", "-o"])
        .arg(trace)
        .arg("--")
        .args(argv)
        .stdin(Stdio::null())
        .output()
        .expect("run reanimator record");
    assert!(o.status.success(), "record {argv:?}: {}", show(&o));
}

/// A small real recording: a shell that forks dd (138-byte writes to a
/// file), a second dd (reads it back in 4 KiB reads) and a failing ls.
fn small_trace(dir: &Path) -> PathBuf {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let trace = dir.join("small.rtr");
    record(
        &work,
        &trace,
        &[
            "sh",
            "-c",
            "dd if=/dev/zero of=out.bin bs=138 count=300 2>/dev/null; \
             dd if=out.bin of=copy.bin bs=4096 2>/dev/null; ls no-such-file 2>/dev/null; true",
        ],
    );
    trace
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Nearest-rank quantile, as SQL's percentile_disc.
fn quantile(sorted: &[u64], q: f64) -> u64 {
    let n = sorted.len() as u64;
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n) - 1;
    sorted[rank as usize]
}

#[derive(Default)]
struct Count {
    calls: u64,
    errors: u64,
    read: u64,
    written: u64,
    latencies: Vec<u64>,
}

#[test]
fn stats_agree_with_an_independent_count_over_dump_json() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = small_trace(tmp.path());
    let t = trace.to_str().unwrap();
    let events: Vec<Value> = json_lines(&ok(&["dump", "--json", "--no-data", t]))
        .into_iter()
        .filter(|v| v["type"] == "syscall")
        .collect();
    // The independent count: names and return values straight from the
    // dump, and the classic data calls by name.
    let mut want: BTreeMap<String, Count> = BTreeMap::new();
    for e in &events {
        let c = want
            .entry(e["name"].as_str().unwrap().to_string())
            .or_default();
        c.calls += 1;
        if let Some(d) = e["duration_ns"].as_u64() {
            c.latencies.push(d);
            c.errors += u64::from(e["errno"].as_u64().unwrap() != 0);
            let ret = e["ret"].as_i64().unwrap();
            if e["errno"].as_u64() == Some(0) {
                match e["name"].as_str().unwrap() {
                    "read" | "pread64" | "readv" => c.read += ret as u64,
                    "write" | "pwrite64" | "writev" => c.written += ret as u64,
                    _ => {}
                }
            }
        }
    }
    let stats: Value = serde_json::from_str(&ok(&["stats", "--json", t])).unwrap();
    assert_eq!(stats["totals"]["calls"].as_u64(), Some(events.len() as u64));
    let groups = stats["groups"].as_array().unwrap();
    assert_eq!(groups.len(), want.len());
    for g in groups {
        let name = g["key"].as_str().unwrap();
        let c = want.get_mut(name).unwrap();
        assert_eq!(g["calls"].as_u64(), Some(c.calls), "{name} calls");
        assert_eq!(g["errors"].as_u64(), Some(c.errors), "{name} errors");
        if ["read", "write"].contains(&name) {
            assert_eq!(g["bytes_read"].as_u64(), Some(c.read), "{name} read");
            assert_eq!(
                g["bytes_written"].as_u64(),
                Some(c.written),
                "{name} written"
            );
        }
        c.latencies.sort_unstable();
        let lat = &g["latency_ns"];
        if c.latencies.is_empty() {
            assert!(lat["p50"].is_null(), "{name}: no call returned");
            continue;
        }
        let exact = lat["exact"].as_bool().unwrap();
        for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999)] {
            let (got, want) = (lat[key].as_u64().unwrap(), quantile(&c.latencies, q));
            if exact {
                assert_eq!(got, want, "{name} {key}");
            } else {
                let err = got.abs_diff(want) as f64 / want as f64;
                assert!(err <= 1.0 / 128.0, "{name} {key}: {got} vs {want}");
            }
        }
        assert_eq!(
            lat["max"].as_u64(),
            c.latencies.last().copied(),
            "{name} max"
        );
    }
    // dd's 300 writes of 138 bytes are visible at a glance.
    let write = groups.iter().find(|g| g["key"] == "write").unwrap();
    let top = &write["write_sizes"]["top"][0];
    assert_eq!(
        (top["size"].as_u64(), top["count"].as_u64()),
        (Some(138), Some(300))
    );
    // The span is the calls': first entry to last exit, placed in the
    // times --from and --to take.
    let first = events.iter().map(|e| e["time_ns"].as_u64().unwrap()).min();
    let last = events
        .iter()
        .map(|e| e["time_ns"].as_u64().unwrap() + e["duration_ns"].as_u64().unwrap_or(0))
        .max();
    assert_eq!(stats["start_ns"].as_u64(), first);
    assert_eq!(stats["end_ns"].as_u64(), last);
    let origin = stats["origin_ns"].as_u64().unwrap();
    assert!(origin <= first.unwrap());
    let late = (first.unwrap() - origin) + (last.unwrap() - first.unwrap()) / 2;
    let windowed: Value =
        serde_json::from_str(&ok(&["stats", "--json", t, "--from", &format!("{late}ns")])).unwrap();
    assert!(windowed["start_ns"].as_u64().unwrap() >= origin + late);
    let text = ok(&["stats", t]);
    assert!(text.contains("from the recording's start"), "{text}");
    assert!(text.contains("138 B ×300"), "{text}");
    assert!(text.contains("128 B–255 B"), "{text}");

    // Per process: every call belongs to exactly one, and the shell is
    // named by its executable.
    let by_pid: Value =
        serde_json::from_str(&ok(&["stats", "--json", "--by", "process", t])).unwrap();
    let sum: u64 = by_pid["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["calls"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, events.len() as u64);
    assert!(by_pid["processes"].as_u64().unwrap() >= 4, "sh, dd, dd, ls");
    // With a filter, the processes and threads that made the calls kept
    // (every process start record is kept: they were counted, 4 or more).
    // The call made by the fewest processes, and who made it.
    let mut makers: BTreeMap<&str, std::collections::BTreeSet<u64>> = BTreeMap::new();
    for e in &events {
        makers
            .entry(e["name"].as_str().unwrap())
            .or_default()
            .insert(e["tgid"].as_u64().unwrap());
    }
    let (call, by) = makers.iter().min_by_key(|(_, p)| p.len()).unwrap();
    let kept: Value = serde_json::from_str(&ok(&["stats", "--json", "--call", call, t])).unwrap();
    assert_eq!(
        kept["processes"].as_u64(),
        Some(by.len() as u64),
        "{call}: {kept}"
    );
    assert!(by.len() < 4, "{call} made by every process");
    assert!(by_pid["groups"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["exe"] == "dash" || g["exe"] == "sh" || g["exe"] == "bash"));

    // Per path: the file dd wrote is attributed its 300 writes through the
    // descriptor it opened.
    let by_path: Value =
        serde_json::from_str(&ok(&["stats", "--json", "--by", "path", t])).unwrap();
    let out_bin = by_path["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"].as_str().unwrap().ends_with("/work/out.bin"))
        .expect("a group for out.bin");
    assert_eq!(out_bin["bytes_written"].as_u64(), Some(300 * 138));
    assert_eq!(
        out_bin["bytes_read"].as_u64(),
        Some(300 * 138),
        "dd read it back"
    );
}

/// io_uring requests name their files only inside the ring
/// (tests/programs/uring_files.c writes `out.dat` on its descriptor and
/// `fixed.dat` as a registered file, each submitted by one
/// `io_uring_enter` and waited for by another): `stats --by path`
/// attributed their 4 KiB to `<io_uring_setup>`, the ring, and `out.dat`
/// showed only its `openat`; `dump --path` and `select --path` left out
/// the `io_uring_enter` calls.
#[test]
fn io_uring_requests_count_for_the_files_they_name() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "uring_files");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let trace = tmp.path().join("uring.rtr");
    record(&work, &trace, &[exe.to_str().unwrap()]);
    assert_eq!(std::fs::read(work.join("out.dat")).unwrap(), [b'u'; 4096]);
    assert_eq!(std::fs::read(work.join("fixed.dat")).unwrap(), [b'f'; 4096]);
    let t = trace.to_str().unwrap();

    let by_path: Value =
        serde_json::from_str(&ok(&["stats", "--json", "--by", "path", t])).unwrap();
    let groups = by_path["groups"].as_array().unwrap();
    let group = |name: &str| {
        groups
            .iter()
            .find(|g| g["key"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("a group for {name}: {by_path:#}"))
    };
    for name in ["/work/out.dat", "/work/fixed.dat"] {
        let g = group(name);
        assert_eq!(g["bytes_written"].as_u64(), Some(4096), "{name}: {g:#}");
        // The openat and the io_uring_enter that submitted the write, and
        // the one that saw it complete unless that was the same call.
        assert!(g["calls"].as_u64().unwrap() >= 2, "{name}: {g:#}");
    }
    assert_eq!(
        group("<io_uring_setup>")["bytes_written"].as_u64(),
        Some(0),
        "the ring itself wrote nothing"
    );

    // The path filters keep the calls that submitted or completed the
    // requests on the file, and only those.
    let enters = |lines: &[Value]| -> Vec<String> {
        lines
            .iter()
            .filter(|v| v["name"] == "io_uring_enter")
            .map(|v| v.to_string())
            .collect()
    };
    let all = json_lines(&ok(&["dump", "--json", t]));
    let out_dat = json_lines(&ok(&["dump", "--json", "--path", "*out.dat", t]));
    let on_out = enters(&out_dat);
    assert!(!on_out.is_empty(), "dump --path kept no io_uring_enter");
    assert!(on_out.len() < enters(&all).len(), "{on_out:#?}");
    assert!(
        on_out.iter().any(|l| l.contains("WRITE, fd=")),
        "{on_out:#?}"
    );
    assert!(
        on_out.iter().all(|l| l.contains("user_data=0x2a")),
        "{on_out:#?}"
    );
    let sel = tmp.path().join("out.rtr");
    ok(&[
        "select",
        t,
        "-o",
        sel.to_str().unwrap(),
        "--path",
        "*out.dat",
    ]);
    let selected = json_lines(&ok(&["dump", "--json", sel.to_str().unwrap()]));
    assert_eq!(
        enters(&selected),
        on_out,
        "select --path keeps what dump --path shows"
    );
    let fixed = json_lines(&ok(&["dump", "--json", "--path", "*fixed.dat", t]));
    let on_fixed = enters(&fixed);
    assert!(!on_fixed.is_empty(), "the registered file's requests");
    assert!(on_fixed.iter().all(|l| !on_out.contains(l)));
}

/// `stats --svg` draws the report of a real trace as one SVG file,
/// stdout unchanged, and keeps an existing file unless told otherwise.
#[test]
fn stats_draws_the_report_as_svg() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = small_trace(tmp.path());
    let t = trace.to_str().unwrap();
    let svg = tmp.path().join("stats.svg");
    let s = svg.to_str().unwrap();
    let plain = ok(&["stats", t]);
    let o = run(&["stats", t, "--svg", s]);
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        plain,
        "stdout as without --svg"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("stats.svg: the statistics as a picture"),
        "{}",
        show(&o)
    );
    let picture = std::fs::read_to_string(&svg).unwrap();
    let body = picture
        .strip_prefix(r#"<?xml version="1.0" encoding="UTF-8"?>"#)
        .expect("an XML declaration first")
        .trim_start();
    assert!(body.starts_with("<svg"), "{picture}");
    assert!(picture.trim_end().ends_with("</svg>"), "{picture}");
    assert_eq!(picture.matches("<svg").count(), 1);
    assert!(!picture.contains("NaN") && !picture.contains("inf"));
    assert!(!picture.contains("<script"), "no scripts");
    // The busiest call has the first row; dd's 138-byte writes are
    // marked as the most common size.
    let stats: Value = serde_json::from_str(&ok(&["stats", "--json", t])).unwrap();
    let busiest = stats["groups"][0]["key"].as_str().unwrap();
    assert!(picture.contains(&format!(">{busiest}<")), "{busiest}");
    assert!(picture.contains("most common 138 B: ×300"), "{picture}");
    for part in ["Calls and bytes", "Latency", "Transfer sizes", "small.rtr"] {
        assert!(picture.contains(part), "{part} missing");
    }

    // An existing file is kept without --force: exit 1, one line.
    let o = run(&["stats", t, "--svg", s]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("stats.svg: already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(o.stdout.is_empty(), "refused before the report");
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), picture);

    // --force replaces it, with --json on stdout as without --svg.
    std::fs::write(&svg, "old").unwrap();
    let o = run(&["stats", t, "--json", "--svg", s, "--force"]);
    assert!(o.status.success(), "{}", show(&o));
    serde_json::from_slice::<Value>(&o.stdout).expect("one JSON object");
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), picture);
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("stats.svg"))
        .collect();
    assert_eq!(names, ["stats.svg"], "no temporary file left");

    // Never over the trace itself, even with --force.
    let before = std::fs::read(&trace).unwrap();
    let o = run(&["stats", t, "--svg", t, "--force"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("must not overwrite a trace"),
        "{}",
        show(&o)
    );
    assert_eq!(std::fs::read(&trace).unwrap(), before);
}

/// Selections hold exactly what dump shows with the same filter.
#[test]
fn select_output_dumps_like_the_filtered_original() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = small_trace(tmp.path());
    let t = trace.to_str().unwrap();
    let all = json_lines(&ok(&["dump", "--json", t]));
    let dd_pid = all
        .iter()
        .find(|v| v["name"] == "execve" && v["args"]["pathname"].as_str().unwrap().ends_with("/dd"))
        .expect("dd was recorded")["tgid"]
        .to_string();
    let first = all[0]["time_ns"].as_u64().unwrap();
    // The time of the middle system call, not the middle of the time
    // span: how calls spread in time depends on the back end and the load.
    let mut call_times: Vec<u64> = all
        .iter()
        .filter(|v| v["type"] == "syscall")
        .map(|v| v["time_ns"].as_u64().unwrap())
        .collect();
    call_times.sort_unstable();
    // Times given to --from/--to count from the recording's clock anchor.
    let anchor =
        reanimator_trace::Reader::open(&trace, reanimator_trace::ReadOptions { data: false })
            .unwrap()
            .meta()
            .clock
            .monotonic_ns;
    let start = if anchor != 0 { anchor } else { first };
    let mid = format!("{}ns", call_times[call_times.len() / 2] - start);
    let filters: Vec<Vec<&str>> = vec![
        vec!["--pid", &dd_pid],
        vec!["--call", "write,openat,%process"],
        vec!["--path", "*.bin"],
        vec!["--from", &mid],
        vec!["--to", &mid, "--call", "%file"],
    ];
    for (i, f) in filters.iter().enumerate() {
        let out = tmp.path().join(format!("sel{i}.rtr"));
        let mut args = vec!["select", t, "-o", out.to_str().unwrap()];
        args.extend(f);
        ok(&args);
        let mut args = vec!["dump", "--json", t];
        args.extend(f);
        let want = ok(&args);
        let got = ok(&["dump", "--json", out.to_str().unwrap()]);
        assert!(
            want.lines().any(|l| l.contains("\"syscall\"")),
            "{f:?} keeps some calls"
        );
        assert!(want.lines().count() < all.len(), "{f:?} drops some records");
        assert_eq!(got, want, "select {f:?} vs dump {f:?}");
        let mut args = vec!["dump", out.to_str().unwrap()];
        args.extend(f);
        assert_eq!(
            ok(&args).lines().count(),
            want.lines().count(),
            "the filter keeps a selection whole"
        );
    }
    // The path filter kept dd's 300 writes and the second dd's reads and
    // writes.
    let sel = json_lines(&ok(&[
        "dump",
        "--json",
        tmp.path().join("sel2.rtr").to_str().unwrap(),
    ]));
    let writes = sel.iter().filter(|v| v["name"] == "write").count();
    assert!(writes >= 300, "{writes}");
    // A selection of everything replays clean.
    let whole = tmp.path().join("whole.rtr");
    ok(&["select", t, "-o", whole.to_str().unwrap()]);
    let root = tmp.path().join("root");
    let rep = run(&[
        "replay",
        whole.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&rep.stderr);
    assert!(
        rep.status.success() && err.contains(" 0 mismatches") && err.contains(", 0 differ"),
        "{}",
        show(&rep)
    );
    // A filter that happens to leave nothing out keeps the final state.
    let late = tmp.path().join("late.rtr");
    ok(&["select", t, "-o", late.to_str().unwrap(), "--to", "1h"]);
    assert_eq!(
        json_lines(&ok(&["dump", "--json", late.to_str().unwrap()])),
        all,
        "--to beyond the end keeps every record"
    );
    // A partial selection has no final state, and its replay says why.
    let part = run(&[
        "replay",
        tmp.path().join("sel0.rtr").to_str().unwrap(),
        "--root",
        tmp.path().join("root-part").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&part.stderr);
    assert!(
        err.contains("holds no final state (it is a selection"),
        "{}",
        show(&part)
    );
    // Outputs are never overwritten without --force, nor the input.
    let again = run(&["select", t, "-o", whole.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    ok(&[
        "select",
        t,
        "-o",
        whole.to_str().unwrap(),
        "--force",
        "--pid",
        &dd_pid,
    ]);
    let same = run(&["select", t, "-o", t, "--force"]);
    assert_eq!(same.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&same.stderr).contains("must differ"));
}

#[test]
fn export_writes_parquet_and_csv_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = small_trace(tmp.path());
    let t = trace.to_str().unwrap();
    let stats: Value = serde_json::from_str(&ok(&["stats", "--json", t])).unwrap();
    let calls = stats["totals"]["calls"].as_u64().unwrap();
    let pq = tmp.path().join("pq");
    let report = ok(&["export", t, "-o", pq.to_str().unwrap()]);
    assert!(
        report.contains(&format!("events.parquet: {calls} rows")),
        "{report}"
    );
    for table in ["events", "data", "processes"] {
        let bytes = std::fs::read(pq.join(format!("{table}.parquet"))).unwrap();
        assert!(
            bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
            "{table}"
        );
    }
    let again = run(&["export", t, "-o", pq.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1), "refuses to overwrite");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    ok(&["export", t, "-o", pq.to_str().unwrap(), "--force"]);

    let csv = tmp.path().join("csv");
    ok(&["export", t, "--format", "csv", "-o", csv.to_str().unwrap()]);
    let events = std::fs::read_to_string(csv.join("events.csv")).unwrap();
    let mut lines = events.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..4], ["seq", "time_ns", "rel_ns", "timestamp"]);
    assert_eq!(lines.count() as u64, calls);
    // The spawned process's supplementary groups, as a JSON array in the
    // last column (created processes have their parent's: empty).
    let processes = std::fs::read_to_string(csv.join("processes.csv")).unwrap();
    let mut rows = processes.lines();
    assert!(rows.next().unwrap().ends_with(",groups"));
    let spawned = rows
        .find(|r| r.contains(",start,") && r.contains(",spawned,"))
        .expect("a spawned start row");
    let groups = spawned.rsplit(',').next().unwrap();
    assert!(
        groups.ends_with(']') || groups.ends_with("]\""),
        "{spawned}"
    );
    // The tables hold the program's data: readable by their owner only,
    // as traces are.
    for file in ["events.csv", "data.csv", "processes.csv"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(csv.join(file))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{file}");
    }
    let data = std::fs::read_to_string(csv.join("data.csv")).unwrap();
    // "/dev/zero" as dd opened it, in hex.
    assert!(data.contains(
        &"/dev/zero"
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    ));
}

/// The paper's kind of trace (RocksDB db_bench) exported to Parquet and
/// read back with DuckDB and pyarrow: the same counts, bytes and
/// quantiles as `stats --json`, with the query docs/ANALYSIS.md shows.
#[test]
fn db_bench_export_matches_stats_in_duckdb_and_pyarrow() {
    require("db_bench");
    require("python3");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let trace = tmp.path().join("db_bench.rtr");
    record(
        &work,
        &trace,
        &[
            "db_bench",
            "--benchmarks=fillseq,fillrandom,readrandom",
            "--num=5000",
            "--threads=1",
            &format!("--db={}", work.join("db").display()),
            "--compression_type=none",
            "--statistics=0",
        ],
    );
    let t = trace.to_str().unwrap();
    let stats = tmp.path().join("stats.json");
    std::fs::write(&stats, ok(&["stats", "--json", t])).unwrap();
    let out = tmp.path().join("export");
    ok(&["export", t, "-o", out.to_str().unwrap()]);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let check = Command::new("python3")
        .arg(root.join("tests/python/check_export.py"))
        .arg(&out)
        .arg(&stats)
        .arg(root.join("docs/ANALYSIS.md"))
        .output()
        .expect("run python3");
    assert!(check.status.success(), "{}", show(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("equal in DuckDB and pyarrow"));
}

/// Every command fails on a damaged trace with one clear line naming the
/// file, exits 1, never panics, and leaves no partial output behind.
#[test]
fn every_command_rejects_corrupt_traces_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = small_trace(tmp.path());
    let bytes = std::fs::read(&trace).unwrap();
    let flipped = {
        let mut b = bytes.clone();
        let n = b.len();
        b[n / 2] ^= 0x10;
        b
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "empty file"),
        (
            "text",
            b"#!/bin/sh\necho not a trace\n".to_vec(),
            "not a reanimator trace",
        ),
        ("truncated", bytes[..bytes.len() - 20].to_vec(), "truncated"),
        ("unfinished", bytes[..bytes.len() * 2 / 3].to_vec(), ""),
        ("flipped", flipped, "corrupt"),
    ];
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["dump"],
        vec!["dump", "--json", "--path", "*.bin"],
        vec!["info"],
        vec!["info", "--json"],
        vec!["stats"],
        vec!["stats", "--json", "--by", "path"],
        vec!["stats", "--svg", o],
        vec!["select", "-o", o],
        vec!["select", "-o", o, "--call", "write"],
        vec!["export", "-o", o],
        vec!["export", "--format", "csv", "-o", o],
    ];
    for (name, content, want) in &cases {
        let p = tmp.path().join(name);
        std::fs::write(&p, content).unwrap();
        for cmd in &commands {
            let mut args = cmd.clone();
            args.insert(1, p.to_str().unwrap());
            let r = run(&args);
            let err = String::from_utf8_lossy(&r.stderr);
            assert_eq!(r.status.code(), Some(1), "{name} {cmd:?}: {}", show(&r));
            assert!(!err.contains("panicked"), "{name} {cmd:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{name} {cmd:?}: one line: {err}");
            assert!(
                err.contains(name) && err.contains(want),
                "{name} {cmd:?}: {err}"
            );
            if cmd[0] == "select" {
                assert!(!out.exists(), "{name} {cmd:?}: partial selection left");
            }
            if cmd[0] == "stats" {
                assert!(!out.exists(), "{name} {cmd:?}: picture of nothing left");
            }
            if cmd[0] == "export" {
                assert!(!out.exists(), "{name} {cmd:?}: partial export left");
            }
        }
    }
    let bad = run(&["stats", trace.to_str().unwrap(), "--call", "nosuchcall"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown system call"));
    let bad = run(&["dump", trace.to_str().unwrap(), "--from", "soon"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("bad time"));
}

/// `dump | head`: the reader going away ends `dump` quietly and
/// successfully, as it does `cat`, in text and in JSON.
#[test]
fn dump_into_a_closed_pipe_ends_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = small_trace(tmp.path());
    for json in [false, true] {
        let mut child = Command::new(bin())
            .arg("dump")
            .args(json.then_some("--json"))
            .arg(&trace)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one byte, then close the pipe before dump is done.
        let mut out = child.stdout.take().unwrap();
        let mut byte = [0u8; 1];
        std::io::Read::read_exact(&mut out, &mut byte).unwrap();
        drop(out);
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "json {json}: {}", show(&o));
        assert!(o.stderr.is_empty(), "json {json}: {}", show(&o));
    }
}

/// What the recorder could not capture (here buffers cut by `--data`) is
/// said by `info` as the recording's summary line said it, from the end
/// record: a trace with unreadable captures showed "lost nothing" and no
/// sign of them, though its replay could not be clean.
#[test]
fn info_repeats_what_the_recorder_could_not_capture() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("cut.rtr");
    let o = Command::new(bin())
        .current_dir(tmp.path())
        .args(["record", "--backend", "ptrace", "--data", "max=16", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", "head -c 100 /etc/passwd > o"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let said = String::from_utf8_lossy(&o.stderr);
    let cut = said
        .split("; ")
        .find(|p| p.ends_with("truncated") || p.ends_with("truncated\n"))
        .unwrap_or_else(|| panic!("no truncated captures in {said}"))
        .trim_end()
        .to_string();
    let t = trace.to_str().unwrap();
    let text = ok(&["info", t]);
    assert!(
        text.contains(&format!("recorder said  {cut}\n")),
        "{cut:?} in\n{text}"
    );
    let v: Value = serde_json::from_str(&ok(&["info", "--json", t])).unwrap();
    assert_eq!(v["end"]["recorder_notes"][0].as_str(), Some(cut.as_str()));
}

/// `info` describes a trace from its meta frame and end record, and says
/// plainly when it is not complete.
#[test]
fn info_describes_the_recording_and_says_when_a_trace_is_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = small_trace(tmp.path());
    let t = trace.to_str().unwrap();
    let calls = json_lines(&ok(&["dump", "--json", "--no-data", t]))
        .iter()
        .filter(|v| v["type"] == "syscall")
        .count() as u64;
    let text = ok(&["info", t]);
    for want in [
        "command        sh -c 'dd if=/dev/zero of=out.bin",
        &format!("holds          {calls} system calls, 4 processes"),
        "lost           nothing",
        "complete       yes",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    assert!(!text.contains("recorder said"), "{text}");
    let v: Value = serde_json::from_str(&ok(&["info", "--json", t])).unwrap();
    assert_eq!(v["complete"], true);
    assert_eq!(v["end"]["syscalls"].as_u64(), Some(calls));
    assert_eq!(v["read"]["syscalls"].as_u64(), Some(calls));
    assert_eq!(v["meta"]["command"][0], "sh");
    assert!(v["read"]["paths_after"].as_u64().unwrap() > 0);
    // Cut short: what could be read, then why it stops, and a failure.
    let bytes = std::fs::read(&trace).unwrap();
    let cut = tmp.path().join("cut.rtr");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let o = run(&["info", cut.to_str().unwrap()]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(out.contains("complete       no: "), "{out}");
    assert!(out.contains("(read so far)"), "{out}");
    assert!(err.contains("reanimator recover"), "{err}");
}
