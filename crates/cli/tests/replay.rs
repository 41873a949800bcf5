//! End-to-end replay: real programs recorded with `reanimator record` and
//! replayed with `reanimator replay` into an empty root, with every result
//! verified and the final files compared (zero mismatches, zero
//! differences). Needs `cc`, sqlite3, tar, git, db_bench, fio, postmark,
//! PostgreSQL, MariaDB and sysbench (scripts/install-deps.sh installs
//! them); a missing tool fails loudly.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{bin, compile, output_within, program, require, require_root, show};

/// Records `argv` in `work`, then replays into a fresh root and asserts a
/// clean replay. Returns the replay's stderr.
fn record_and_replay(tmp: &Path, work: &Path, argv: &[&str]) -> String {
    let trace = record(tmp, work, argv);
    replay_clean(tmp, &trace, &[])
}

/// A temporary directory and an empty `work` directory inside it, where
/// a test runs the program it records.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    (tmp, work)
}

/// Records `argv` in `work` into a trace under `tmp`.
fn record(tmp: &Path, work: &Path, argv: &[&str]) -> PathBuf {
    record_with(tmp, work, "auto", argv)
}

/// Records with `--backend backend`.
fn record_with(tmp: &Path, work: &Path, backend: &str, argv: &[&str]) -> PathBuf {
    let trace = tmp.join("t.rtr");
    let _ = std::fs::remove_file(&trace);
    // Bounded: a recording that stalls (a program stopped for good, a
    // server left running) must fail the test, not hold CI.
    let rec = output_within(
        Command::new(bin())
            .current_dir(work)
            .args(["record", "--backend", backend, "-o"])
            .arg(&trace)
            .arg("--")
            .args(argv)
            .stdin(Stdio::null()),
        Duration::from_secs(300),
    );
    assert!(
        rec.status.success() || rec.status.code().is_some(),
        "record: {}",
        show(&rec)
    );
    trace
}

/// Replays `trace` into a fresh root with the extra replay options and
/// asserts zero mismatches and an identical final state. Returns stderr.
fn replay_clean(tmp: &Path, trace: &Path, options: &[&str]) -> String {
    let root = tmp.join("root");
    let _ = std::fs::remove_dir_all(&root);
    replay_clean_at(&root, trace, options)
}

/// Replays `trace` into `root` as it is (missing, or empty) and asserts a
/// clean replay, as [`replay_clean`] does. Returns stderr.
fn replay_clean_at(root: &Path, trace: &Path, options: &[&str]) -> String {
    replay_clean_but(root, trace, options, |_| false)
}

/// As [`replay_clean_at`], except that final-state differences for which
/// `excused` (given the replay's report line) returns true are let pass.
fn replay_clean_but(
    root: &Path,
    trace: &Path,
    options: &[&str],
    excused: impl Fn(&str) -> bool,
) -> String {
    let rep = output_within(
        Command::new(bin())
            .args(["replay"])
            .arg(trace)
            .arg("--root")
            .arg(root)
            .args(options),
        Duration::from_secs(300),
    );
    let err = String::from_utf8_lossy(&rep.stderr).into_owned();
    let differing: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("final state differs:"))
        .collect();
    let excused = differing.iter().filter(|l| excused(l)).count();
    let clean = err.contains(" 0 mismatches")
        && err.contains(&format!(", {excused} differ"))
        && (rep.status.success() || excused > 0 && excused == differing.len());
    if let (false, Some(keep)) = (clean, std::env::var_os("REANIMATOR_TEST_KEEP")) {
        // A replay that is not clean now and then (a race the recording
        // did not order) can only be studied with its trace.
        let kept = Path::new(&keep).join(format!(
            "{}-{}.rtr",
            std::thread::current()
                .name()
                .unwrap_or("test")
                .replace("::", "-"),
            std::process::id()
        ));
        match std::fs::copy(trace, &kept) {
            Ok(_) => eprintln!("kept the trace as {}", kept.display()),
            Err(e) => eprintln!("could not keep the trace as {}: {e}", kept.display()),
        }
    }
    assert!(
        clean,
        "replay of {} into {} with {options:?} is not clean:\n{}{}",
        trace.display(),
        root.display(),
        show(&rep),
        differences(root, &err)
    );
    err
}

/// An empty `work-BACKEND` directory in `tmp`, where a test runs the
/// program it records with that back end.
fn work_for(tmp: &Path, backend: &str) -> PathBuf {
    let work = tmp.join(format!("work-{backend}"));
    std::fs::create_dir_all(&work).unwrap();
    work
}

/// Replays `trace` into `root` and returns its stderr, clean or not.
fn replay_stderr(trace: &Path, root: &Path) -> String {
    let rep = output_within(
        Command::new(bin())
            .arg("replay")
            .arg(trace)
            .arg("--root")
            .arg(root),
        Duration::from_secs(300),
    );
    String::from_utf8_lossy(&rep.stderr).into_owned()
}

/// Where replay into `root` puts the recorded absolute path `recorded`.
fn under(root: &Path, recorded: &Path) -> PathBuf {
    root.join(recorded.strip_prefix("/").expect("an absolute path"))
}

/// For each file the replay's report says differs, where its recorded
/// copy is still on disk: which 4 KiB blocks differ. A failure in CI is
/// then explained by its log alone.
fn differences(root: &Path, report: &str) -> String {
    let mut out = String::new();
    for line in report.lines() {
        let Some(path) = line
            .split_once("final state differs: ")
            .and_then(|(_, rest)| rest.strip_suffix(": contents differ"))
        else {
            continue;
        };
        let recorded = Path::new(path);
        let replayed = under(root, recorded);
        let (Ok(a), Ok(b)) = (std::fs::read(recorded), std::fs::read(&replayed)) else {
            continue;
        };
        let blocks = a.len().max(b.len()).div_ceil(4096);
        let differ: Vec<usize> = (0..blocks)
            .filter(|&i| {
                let block = |v: &[u8]| {
                    v.get(i * 4096..((i + 1) * 4096).min(v.len()))
                        .map(<[u8]>::to_vec)
                };
                block(&a) != block(&b)
            })
            .collect();
        out += &format!(
            "\n{path}: {} bytes recorded, {} replayed; {} of {blocks} blocks of 4 KiB differ, first at {:?}",
            a.len(),
            b.len(),
            differ.len(),
            differ.iter().take(8).map(|i| i * 4096).collect::<Vec<_>>()
        );
        if let Some(&i) = differ.first() {
            let head = |v: &[u8]| {
                format!(
                    "{:02x?}",
                    &v[(i * 4096).min(v.len())..(i * 4096 + 16).min(v.len())]
                )
            };
            out += &format!("\n  recorded {}\n  replayed {}", head(&a), head(&b));
        }
    }
    out
}

/// True when the replay's report line `line` says that `file` (written
/// through one offset shared by several processes) differs, and its
/// replayed copy under `root` holds the recorded file's lines in another
/// order: where a ptrace recording's tracer threads were held up, it does
/// not know the order such writes took effect in (REPLAY.md, "Ordering").
/// Every line must still be there, once.
fn lines_reordered(root: &Path, file: &Path, line: &str) -> bool {
    if !line.contains(&format!("{}: contents differ", file.display())) {
        return false;
    }
    let lines = |p: &Path| {
        let mut v: Vec<String> = std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        v.sort();
        v
    };
    let replayed = under(root, file);
    let same = lines(file) == lines(&replayed);
    if same {
        eprintln!(
            "{}: replayed with its lines in another order",
            file.display()
        );
    }
    same
}

#[test]
fn a_failed_replay_names_the_blocks_that_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let recorded = tmp.path().join("f");
    let root = tmp.path().join("root");
    let replayed = under(&root, &recorded);
    std::fs::create_dir_all(replayed.parent().unwrap()).unwrap();
    let mut data = vec![7u8; 3 * 4096];
    std::fs::write(&recorded, &data).unwrap();
    data[4096 + 10] = 8;
    std::fs::write(&replayed, &data).unwrap();
    let report = format!(
        "reanimator: final state differs: {}: contents differ\n",
        recorded.display()
    );
    let said = differences(&root, &report);
    assert!(
        said.contains("1 of 3 blocks of 4 KiB differ, first at [4096]"),
        "{said}"
    );
}

/// `--show-mismatches N` prints the first N mismatches in full and counts
/// the rest; `all` prints every one. Three reads of a file changed since
/// the recording, replayed in place, mismatch.
#[test]
fn show_mismatches_sets_how_many_are_printed() {
    let (tmp, work) = scratch();
    std::fs::write(work.join("f"), "recorded\n").unwrap();
    let trace = record_with(tmp.path(), &work, "ptrace", &["cat", "f", "f", "f"]);
    std::fs::write(work.join("f"), "changed!\n").unwrap();
    let replay = |show: &str| {
        output_within(
            Command::new(bin())
                .args(["replay", "--in-place", "--show-mismatches", show])
                .arg(&trace),
            Duration::from_secs(120),
        )
    };
    let printed = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.contains("mismatch: ") && l.contains("read("))
            .count()
    };
    let one = replay("1");
    assert_eq!(one.status.code(), Some(1), "{}", show(&one));
    assert_eq!(printed(&one), 1, "{}", show(&one));
    assert!(
        String::from_utf8_lossy(&one.stderr).contains("... 2 more mismatches not shown"),
        "{}",
        show(&one)
    );
    let all = replay("all");
    assert_eq!(printed(&all), 3, "{}", show(&all));
    assert!(!String::from_utf8_lossy(&all.stderr).contains("not shown"));
    let bad = replay("some");
    assert_eq!(bad.status.code(), Some(2), "{}", show(&bad));
}

/// Builds a recorder test program (crates/ptrace/tests/programs).
fn build(tmp: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ptrace/tests/programs")
        .join(format!("{name}.c"));
    compile(tmp, name, &src)
}

/// Asserts that each of `names` holds the same bytes under `replayed` as
/// under `work`, where the program ran; `what` says which replay.
fn same_files(replayed: &Path, work: &Path, names: &[&str], what: &str) {
    for name in names {
        assert_eq!(
            std::fs::read(replayed.join(name)).unwrap(),
            std::fs::read(work.join(name)).unwrap(),
            "{what}: {name}"
        );
    }
}

/// `reanimator dump` of a trace.
fn dump(trace: &Path) -> String {
    let out = Command::new(bin()).arg("dump").arg(trace).output().unwrap();
    assert!(out.status.success(), "dump: {}", show(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `reanimator dump` of a trace with whole paths (a temporary directory's
/// are longer than the default 32 bytes).
fn dump_whole(trace: &Path) -> String {
    let out = Command::new(bin())
        .args(["dump", "-s", "4096"])
        .arg(trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "dump: {}", show(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_recorder_test_program_replays_clean() {
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "files",
        "dirs",
        "stats",
        "xattrs",
        "mmaps",
        "pipes",
        "sockets",
        "threads",
        "forks",
        "forkmany",
        "orphan",
        "edges",
        "signals",
        "blocked_exit",
        "thread_exec",
        "aio",
        "uring",
    ] {
        let exe = build(tmp.path(), name);
        // ptrace (one tracer per CPU, threads and processes spread over
        // them) and the default back end (eBPF when root).
        for backend in ["ptrace", "auto"] {
            let work = tmp.path().join(format!("work-{name}-{backend}"));
            std::fs::create_dir_all(&work).unwrap();
            let argv = [exe.to_str().unwrap(), work.to_str().unwrap()];
            let trace = record_with(tmp.path(), &work, backend, &argv);
            replay_clean(tmp.path(), &trace, &[]);
            // Strict order on `threads` (16 MB of writes, twice the
            // dispatcher's read-ahead room, while the main thread's join
            // is unread until the end) once read one record per 200 ms.
            replay_clean(tmp.path(), &trace, &["--order", "strict"]);
        }
    }
}

#[test]
fn a_crashing_program_replays_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = build(tmp.path(), "crash");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    record_and_replay(
        tmp.path(),
        &work,
        &[exe.to_str().unwrap(), work.to_str().unwrap(), "segv"],
    );
}

#[test]
fn sqlite3_on_an_existing_database() {
    require("sqlite3");
    let (tmp, work) = scratch();
    let setup = Command::new("sqlite3")
        .arg(work.join("app.db"))
        .arg("create table t(id integer primary key, v text); insert into t(v) values ('a'),('b'),('c');")
        .output()
        .unwrap();
    assert!(setup.status.success(), "{}", show(&setup));
    std::fs::write(
        work.join("script.sql"),
        "insert into t(v) select v || 'x' from t; update t set v = upper(v) where id % 2 = 0;\n\
         create index iv on t(v); select count(*), max(v) from t; delete from t where id = 1;\n",
    )
    .unwrap();
    record_and_replay(
        tmp.path(),
        &work,
        &["sh", "-c", "sqlite3 app.db < script.sql"],
    );
}

#[test]
fn tar_extracting_an_existing_archive() {
    require("tar");
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("sub/deeper")).unwrap();
    for i in 0..20 {
        std::fs::write(src.join(format!("sub/f{i}")), vec![i as u8; 1000 * i]).unwrap();
    }
    std::os::unix::fs::symlink("f3", src.join("sub/link")).unwrap();
    std::fs::write(src.join("sub/deeper/x"), b"deep").unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("out")).unwrap();
    let t = Command::new("tar")
        .arg("cf")
        .arg(work.join("a.tar"))
        .arg("-C")
        .arg(&src)
        .arg("sub")
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", show(&t));
    record_and_replay(tmp.path(), &work, &["tar", "xf", "a.tar", "-C", "out"]);
}

/// Everyday shell work: `ls -la` looks at `d/..` without following it,
/// `rm -r` and `mv` name directory entries, a pipeline has real pipes, and
/// `find` and `ls` list a directory that existed before, whose entries
/// the trace never names.
#[test]
fn a_shell_session_with_coreutils() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("old/sub")).unwrap();
    for name in ["f1", "f2", "g"] {
        std::fs::write(work.join("old").join(name), name).unwrap();
    }
    std::os::unix::fs::symlink("f1", work.join("old/link")).unwrap();
    record_and_replay(
        tmp.path(),
        &work,
        &[
            "sh",
            "-c",
            "mkdir -p d/e && echo hi > d/f && cat d/f | gzip > d/g && ln -s f d/l \
             && ls -la d d/. d/e/.. > d/listing && mv d/e d/e2 && rm -r d/e2 && rm d/f \
             && find old -name 'f*' > found && ls old > names",
        ],
    );
}

/// `yes | head -c 1`: `yes` fills the 64 KiB pipe, and its last write
/// waits until `head` exits, then fails with `EPIPE` (and `SIGPIPE`).
/// Replay's pipes hold 1 MiB, so that write, issued, found room and
/// succeeded: a mismatch in nearly every replay, with both back ends. A
/// write that failed with `EPIPE` passed no byte and is not issued.
#[test]
fn a_write_whose_reader_left_replays_clean() {
    let (tmp, work) = scratch();
    for backend in ["ptrace", "auto"] {
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &[
                "bash",
                "-c",
                "yes | head -c 1 > one; echo ${PIPESTATUS[0]} > status",
            ],
        );
        assert_eq!(
            std::fs::read_to_string(work.join("status")).unwrap(),
            "141\n",
            "{backend}: yes died of SIGPIPE"
        );
        let err = replay_clean(tmp.path(), &trace, &[]);
        assert!(err.contains(" 0 mismatches"), "{backend}: {err}");
    }
}

/// Everyday programs over a tree that existed before recording, each
/// recorded and replayed into an empty root. Each found a replay bug once:
/// listing directories the trace never names entries of (find, Python's
/// start-up), a descriptor's close-on-exec flag (perl asks `F_GETFD` of
/// `/dev/urandom`), temporary files (sort), worker processes and threads.
#[test]
fn everyday_programs_over_an_existing_tree_replay_clean() {
    for tool in ["python3", "perl", "find", "sort", "tar", "gzip"] {
        require(tool);
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("src/a/b")).unwrap();
    for i in 1..=3 {
        std::fs::write(work.join(format!("src/a/f{i}")), format!("line {i}\n")).unwrap();
    }
    std::os::unix::fs::symlink("f1", work.join("src/a/l1")).unwrap();
    let python = "import os, json, threading, multiprocessing as m
os.makedirs('p/q', exist_ok=True)
json.dump({'a': 1}, open('p/q/x.json', 'w'))
os.rename('p/q/x.json', 'p/y.json')
print(sorted(os.listdir('src/a')))
def w(i):
    with open(f'th{i}', 'w') as f:
        f.write('x' * 1000)
ts = [threading.Thread(target=w, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
if __name__ == '__main__':
    with m.Pool(2) as pool:
        print(sum(pool.map(abs, range(-50, 50))))";
    let perl = r#"open(F, ">p.txt"); print F "x" x 100; close F;
opendir(D, "src/a"); @e = readdir D; closedir D; utime 1, 2, "p.txt"; unlink "p.txt""#;
    let session = [
        &["find", "src", "-name", "f*", "-newer", "src/a/f1"][..],
        &["cp", "-a", "src", "copy"],
        &[
            "sh",
            "-c",
            "tar czf a.tgz src && mkdir x && tar xzf a.tgz -C x && du -s x > du.txt",
        ],
        &[
            "sh",
            "-c",
            "cat src/a/f* | sort -r -S 1M -T . > sorted.txt && ls -laR src > ls.txt",
        ],
        &["python3", "-c", python],
        &["perl", "-e", perl],
    ];
    for argv in session {
        record_and_replay(tmp.path(), &work, argv);
    }
}

/// `du`, `stat` and `ls -l` only ask what files are: a file nothing reads
/// is recorded at its size without its contents and replays clean, while
/// one read later has its contents recorded then. Both back ends.
#[test]
fn files_only_queried_replay_clean_without_their_contents() {
    for tool in ["du", "stat", "ls", "cat"] {
        require(tool);
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("tree/sub")).unwrap();
    let bytes = |seed: u32| -> Vec<u8> {
        (0..3_000_000u32)
            .map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect()
    };
    std::fs::write(work.join("tree/big"), bytes(1)).unwrap();
    std::fs::write(work.join("tree/sub/deep"), bytes(2)).unwrap();
    std::fs::write(work.join("tree/read_later"), bytes(3)).unwrap();
    let script = "du -a tree > du.txt; stat -c %s tree/big tree/read_later > sizes; \
                  ls -lR tree > ls.txt; cat tree/read_later > copy";
    for backend in ["ptrace", "ebpf"] {
        let trace = record_with(tmp.path(), &work, backend, &["sh", "-c", script]);
        let text = dump_whole(&trace);
        let data_of = |name: &str| -> usize {
            text.lines()
                .filter(|l| l.contains("*** path data") && l.contains(&format!("/tree/{name}\"")))
                .count()
        };
        assert_eq!(
            (data_of("big"), data_of("sub/deep")),
            (0, 0),
            "{backend}: queried files' contents were recorded"
        );
        assert_eq!(
            data_of("read_later"),
            3,
            "{backend}: 3 MB read later, in 1 MiB pieces"
        );
        replay_clean(tmp.path(), &trace, &[]);
        let copy = under(&tmp.path().join("root"), &work).join("copy");
        assert_eq!(std::fs::read(copy).unwrap(), bytes(3), "{backend}");
    }
}

/// A file with two names before the recording (a hard link) is one file
/// in replay: a write through one name is read back through the other.
/// Both back ends.
#[test]
fn pre_existing_hard_links_stay_one_file() {
    let (tmp, work) = scratch();
    for backend in ["ptrace", "ebpf"] {
        std::fs::write(work.join("a"), b"original\n").unwrap();
        let _ = std::fs::remove_file(work.join("b"));
        std::fs::hard_link(work.join("a"), work.join("b")).unwrap();
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &["sh", "-c", "cat b; echo changed > a; cat b"],
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// `rm -rf` of a deep tree climbs back with `openat(fd, "..")` and then
/// removes entries through that descriptor after the directory it climbed
/// from is gone; a shell does `cd ..` from a directory it then removes.
/// Both replay clean, and the removed files' contents are not recorded.
/// Both back ends.
#[test]
fn removing_a_deep_existing_tree_replays_clean() {
    require("rm");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(&work);
        let mut dir = work.join("deep");
        for level in ["a", "b", "c", "d", "e", "f", "g"] {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("file"), level).unwrap();
            dir = dir.join(level);
        }
        std::fs::create_dir_all(work.join("up/down")).unwrap();
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &[
                "sh",
                "-c",
                "rm -rf deep && cd up/down && cd .. && rm -r down && cd .. && rmdir up",
            ],
        );
        // Files removed unread need no contents.
        let text = dump_whole(&trace);
        assert!(
            !text
                .lines()
                .any(|l| l.contains("*** path data") && l.contains("/deep/")),
            "{backend}: contents of removed files recorded"
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// `rmdir` of an existing directory that still holds entries the trace
/// never names fails (`ENOTEMPTY`) in replay as it did, and one the trace
/// emptied itself is removed: `dpkg -r` of a package under `/opt` tries
/// `rmdir("/opt")` (3 mismatches and `/opt` gone before 2026-11-27,
/// seventh session). Both back ends.
#[test]
fn removing_a_directory_that_holds_unnamed_entries_fails_in_replay_too() {
    require("rmdir");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(work.join("opt/other/deeper")).unwrap();
        std::fs::write(work.join("opt/kept"), b"kept").unwrap();
        std::fs::create_dir_all(work.join("mine")).unwrap();
        std::fs::write(work.join("mine/f"), b"f").unwrap();
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &[
                "sh",
                "-c",
                "mkdir opt/pkg && rmdir opt/pkg; rmdir opt; rmdir opt/other; \
                 rm mine/f && rmdir mine; test -d opt/other && test ! -e mine",
            ],
        );
        replay_clean(tmp.path(), &trace, &[]);
        let text = dump(&trace);
        assert_eq!(
            text.lines()
                .filter(|l| l.contains("rmdir(") && l.contains("ENOTEMPTY"))
                .count(),
            2,
            "{backend}: {text}"
        );
    }
}

/// A directory that existed before the recording is moved, then what it
/// held is renamed, read and removed under the new path: replay has every
/// entry, though the trace named none before the move. Both back ends.
#[test]
fn a_moved_existing_directory_keeps_what_it_held() {
    require("mv");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(work.join("from/a/sub")).unwrap();
        std::fs::create_dir_all(work.join("to")).unwrap();
        std::fs::write(work.join("from/a/x"), b"x").unwrap();
        std::fs::write(work.join("from/a/sub/y"), b"y").unwrap();
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &[
                "sh",
                "-c",
                "mv from/a to/ && mv to/a/x to/a/z && cat to/a/sub/y && rm -rf to/a",
            ],
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// A program whose working directory, or a directory it holds open, is
/// renamed (or swapped with `RENAME_EXCHANGE`) goes on inside it at its
/// new name: replay names both by path and must follow the rename. Before,
/// every call relative to them failed with ENOENT. Both back ends.
#[test]
fn a_renamed_working_directory_and_directory_descriptor_follow_the_rename() {
    require("python3");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let script = r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs('d/sub'); os.makedirs('a'); os.makedirs('b')
fd = os.open('d', os.O_RDONLY | os.O_DIRECTORY)
os.chdir('d/sub')
os.rename('../../d', '../../e')
with open(os.open('x', os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd), 'w') as f:
    f.write('through the descriptor')
open('y', 'w').write('in the working directory')
os.chdir('../../a')
assert libc.renameat2(-100, b'../a', -100, b'../b', 2) == 0, ctypes.get_errno()
open('z', 'w').write('in a, now named b')
print(sorted(os.listdir('..')), sorted(os.listdir('.')))
"#;
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
        let trace = record_with(tmp.path(), &work, backend, &["python3", "-c", script]);
        assert_eq!(
            std::fs::read_to_string(work.join("e/x")).unwrap(),
            "through the descriptor"
        );
        assert!(work.join("b/z").exists(), "the exchange moved a to b");
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// A program whose working directory is removed while it is in it (`cd
/// d; rmdir ../d`, `rm -r` of the tree around it) goes on: `.` is the
/// removed directory (`ls` finds it empty), `..` its parent, and files
/// made through `..` exist, while nothing can be made in the removed
/// directory, even once another of its name exists. Before, the recorders named those files from
/// the link `/proc/PID/cwd` reads for a removed directory (`d (deleted)`),
/// so the manifest held a path nothing could find and compared nothing,
/// and replay resolved them from a directory no longer there (46
/// mismatches, and files missing that the final check did not see). Both
/// back ends.
#[test]
fn a_removed_working_directory_goes_on_as_recorded() {
    require("sh");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    // A new `d` made after the removal is another directory: `x` is
    // still made in the removed one, which fails.
    let script = "mkdir -p d e/f && cd d && rmdir ../d && mkdir ../d && ls -la . > ../out 2>&1; \
        touch x 2>> ../out; cd ../e/f && rm -r ../../e && echo hi > ../../../work/out3 && \
        ls .. >> ../../out 2>&1; cd .. && ls -a . >> ../out 2>&1; true";
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
        let trace = record_with(tmp.path(), &work, backend, &["sh", "-c", script]);
        assert_eq!(std::fs::read_to_string(work.join("out3")).unwrap(), "hi\n");
        let dump = Command::new(bin())
            .args(["dump", "-s", "4096"])
            .arg(&trace)
            .output()
            .unwrap();
        let dump = String::from_utf8_lossy(&dump.stdout);
        // out3 is named `.../work/../work/out3`: from the first parent not
        // removed, `..` is left for the kernel, as in any path.
        for name in ["/work/out\"", "/work/out3\""] {
            assert!(
                dump.lines()
                    .any(|l| l.contains("path after") && l.contains(name) && l.contains(": file")),
                "{backend}: the manifest names no file {name}"
            );
        }
        replay_clean(tmp.path(), &trace, &[]);
        let root = tmp.path().join("root");
        let replayed = under(&root, &work);
        assert_eq!(
            std::fs::read_to_string(replayed.join("out3")).unwrap(),
            "hi\n"
        );
        assert_eq!(
            std::fs::read(replayed.join("out")).unwrap(),
            std::fs::read(work.join("out")).unwrap(),
            "{backend}"
        );
    }
}

/// The same through directory descriptors: a program holding a directory
/// open after it was removed lists it (empty), stats it, climbs out of it
/// with `..` (two levels, both removed) and makes a file there, cannot
/// make one inside it even after a new directory of its name was made,
/// and `fchdir`s into it. Before, 19 mismatches and the file made through
/// `..` missing, with "0 differ". Both back ends.
#[test]
fn a_removed_directory_held_open_goes_on_as_recorded() {
    require("python3");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let script = r#"
import os
os.makedirs('a/d/s')
fd = os.open('a/d', os.O_RDONLY | os.O_DIRECTORY)
sub = os.open('a/d/s', os.O_RDONLY | os.O_DIRECTORY)
os.rmdir('a/d/s'); os.rmdir('a/d')
f = os.open('../out', os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
os.write(f, b'%r\n' % (os.listdir(fd),))
os.write(f, b'%o\n' % os.stat('.', dir_fd=fd).st_mode)
os.write(f, b'%o\n' % os.stat('..', dir_fd=sub).st_mode)
up = os.open('../..', os.O_RDONLY | os.O_DIRECTORY, dir_fd=sub)
os.write(f, b'%r\n' % sorted(os.listdir(up)))
os.mkdir('a/d')
try:
    os.open('x', os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
except FileNotFoundError:
    os.write(f, b'not in a removed directory\n')
os.fchdir(fd)
open('../fchdir', 'w').write(repr(os.listdir('.')))
"#;
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
        let trace = record_with(tmp.path(), &work, backend, &["python3", "-c", script]);
        let out = std::fs::read_to_string(work.join("a/out")).unwrap();
        assert!(
            out.ends_with("['out']\nnot in a removed directory\n"),
            "{out}"
        );
        replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work);
        assert_eq!(
            std::fs::read_to_string(replayed.join("a/out")).unwrap(),
            out
        );
        assert!(!replayed.join("a/d/x").exists(), "{backend}");
        assert_eq!(
            std::fs::read_to_string(replayed.join("a/fchdir")).unwrap(),
            "[]"
        );
    }
}

/// The same when the directory was entered or opened through a symbolic
/// link and removed by its own name (`cd link && rmdir ../real`): before,
/// replay compared names only, so the working directory went on as
/// `link`, dangling (`../out` failed with `ENOENT`), and the descriptor
/// opened through `l2` as a live directory: 30 mismatches and 2 paths
/// differing. Both back ends.
#[test]
fn a_directory_removed_by_another_name_goes_on_as_recorded() {
    require("sh");
    require("python3");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let shell = "mkdir -p real && ln -s real link && cd link && rmdir ../real && \
        ls -la . > ../out 2>&1; touch x 2>> ../out; echo $? >> ../out; cd .. && pwd >> out";
    let python = r#"
import os
os.makedirs('r2/s')
os.symlink('r2', 'l2')
fd = os.open('l2/s', os.O_RDONLY | os.O_DIRECTORY)
os.rmdir('r2/s')
out = open('pout', 'w')
print(os.listdir(fd), file=out)
try:
    os.open('f', os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
except FileNotFoundError:
    print('not in a removed directory', file=out)
os.close(os.open('../made', os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
"#;
    let script = format!("{shell}; python3 -c \"{}\"", python.replace('"', "\\\""));
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
        let trace = record_with(tmp.path(), &work, backend, &["sh", "-c", &script]);
        assert!(work.join("r2/made").exists(), "{backend}");
        replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work);
        same_files(&replayed, &work, &["out", "pout"], backend);
        assert!(replayed.join("r2/made").exists(), "{backend}");
    }
}

/// A program in a PID namespace of its own (`unshare -p -f`) sees its
/// children by the ids they have there (`vfork() = 2`), while the
/// recorders, outside it, start them under their global ids. Before, no
/// clone matched a start record: each child started from its parent's
/// latest state with the wrong descriptors, and `cat`'s output went to
/// the replay's own stdout (1 to 23 mismatches and 3 differing paths,
/// both back ends). The recorders now note the global id on such a
/// clone's record (FORMAT.md, `CREATED_ID_ARG`).
#[test]
fn children_in_a_pid_namespace_replay_with_their_own_descriptors() {
    require("unshare");
    require_root("makes a PID namespace");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let script = "echo a > a.txt; cat a.txt > b.txt; ls /proc/self/ > c.txt; \
        sh -c 'cat a.txt b.txt > d.txt' & wait";
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
        let argv = ["unshare", "-p", "-f", "sh", "-c", script];
        let trace = record_with(tmp.path(), &work, backend, &argv);
        assert_eq!(
            std::fs::read_to_string(work.join("d.txt")).unwrap(),
            "a\na\n"
        );
        replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work);
        same_files(&replayed, &work, &["b.txt", "c.txt", "d.txt"], backend);
    }
}

#[test]
fn git_init_add_commit() {
    require("git");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    for i in 0..10 {
        std::fs::write(
            work.join(format!("src/m{i}.rs")),
            format!("fn f{i}() {{}}\n").repeat(i + 1),
        )
        .unwrap();
    }
    record_and_replay(
        tmp.path(),
        &work,
        &[
            "sh",
            "-c",
            "git init -q . && git add . && git -c user.name=t -c user.email=t@example.com commit -qm first",
        ],
    );
}

/// A build, as the brief names it among what users record: `make -j2`
/// compiling and linking a small C project (compiler processes come and
/// go in parallel, read headers, write objects and a program), with both
/// back ends, replayed into an empty root: the same objects and program,
/// byte for byte.
#[test]
fn make_builds_a_small_c_project() {
    require("make");
    require("cc");
    let (tmp, work) = scratch();
    let mut calls = String::new();
    for i in 1..=6 {
        std::fs::write(
            work.join(format!("f{i}.c")),
            format!("#include \"common.h\"\nint f{i}(int x) {{ return x * {i} + K; }}\n"),
        )
        .unwrap();
        calls.push_str(&format!(" + f{i}({i})"));
    }
    std::fs::write(
        work.join("common.h"),
        "#define K 7\nint f1(int); int f2(int); int f3(int); int f4(int); int f5(int); int f6(int);\n",
    )
    .unwrap();
    std::fs::write(
        work.join("main.c"),
        format!(
            "#include <stdio.h>\n#include \"common.h\"\nint main(void) {{ printf(\"%d\\n\", 0{calls}); return 0; }}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        work.join("Makefile"),
        "OBJS = main.o f1.o f2.o f3.o f4.o f5.o f6.o\n\
         prog: $(OBJS)\n\tcc -o $@ $(OBJS)\n\
         %.o: %.c common.h\n\tcc -O1 -c $< -o $@\n",
    )
    .unwrap();
    for backend in ["ptrace", "ebpf"] {
        let _ = Command::new("sh")
            .current_dir(&work)
            .args(["-c", "rm -f prog *.o"])
            .status();
        let trace = record_with(tmp.path(), &work, backend, &["make", "-j2"]);
        let built = Command::new(work.join("prog")).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&built.stdout), "133\n", "{backend}");
        let err = replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work).join("prog");
        assert_eq!(
            std::fs::read(&replayed).unwrap(),
            std::fs::read(work.join("prog")).unwrap(),
            "{backend}: {err}"
        );
    }
}

#[test]
fn rocksdb_db_bench() {
    require("db_bench");
    let (tmp, work) = scratch();
    let db = work.join("db");
    record_and_replay(
        tmp.path(),
        &work,
        &[
            "db_bench",
            "--benchmarks=fillseq,fillrandom,readrandom",
            "--num=5000",
            "--threads=1",
            &format!("--db={}", db.display()),
            "--compression_type=none",
            "--statistics=0",
        ],
    );
}

#[test]
fn fio_with_several_jobs() {
    require("fio");
    let (tmp, work) = scratch();
    let trace = record(
        tmp.path(),
        &work,
        &[
            "fio",
            "--name=mix",
            "--numjobs=3",
            "--rw=randrw",
            "--bs=4k",
            "--size=512k",
            "--ioengine=psync",
            "--thread",
            &format!("--directory={}", work.display()),
            "--output=/dev/null",
        ],
    );
    // Jobs reading and writing at once: every ordering policy must give
    // the same results and files.
    for order in ["overlap", "commute", "strict"] {
        replay_clean(tmp.path(), &trace, &["--order", order]);
    }
}

/// A file system mounted for one test, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    /// Makes a 320 MiB (sparse) image of file system `fs` (`xfs`,
    /// `btrfs`, `ext2`) in `dir` and mounts it on a loop device at
    /// `dir/FS`. Needs root and the file system's `mkfs`; CI has both.
    fn image(dir: &Path, fs: &str) -> Mount {
        let mkfs = format!("mkfs.{fs}");
        require(&mkfs);
        require_root(&format!("mounts a {fs} image on a loop device"));
        let img = dir.join(format!("{fs}.img"));
        std::fs::File::create(&img)
            .unwrap()
            .set_len(320 << 20)
            .unwrap();
        // mke2fs asks before it writes into a regular file.
        let force: &[&str] = if fs.starts_with("ext") { &["-F"] } else { &[] };
        let mk = Command::new(&mkfs)
            .arg("-q")
            .args(force)
            .arg(&img)
            .output()
            .unwrap();
        assert!(mk.status.success(), "{mkfs}: {}", show(&mk));
        Mount::new(&img, &dir.join(fs), &["-o", "loop"])
    }

    /// Mounts a small tmpfs at `dir/NAME` with `options` (`-o`). Needs
    /// root.
    fn tmpfs(dir: &Path, name: &str, options: &str) -> Mount {
        require_root("mounts a tmpfs");
        Mount::new(
            Path::new("tmpfs"),
            &dir.join(name),
            &["-t", "tmpfs", "-o", &format!("size=16m,{options}")],
        )
    }

    /// Replays `trace` into a fresh root `NAME` on this file system and
    /// asserts a clean replay, hands `check` the root, then removes it
    /// (a tmpfs is small).
    fn replay_clean(&self, trace: &Path, name: &str, check: impl FnOnce(&Path)) {
        let root = self.0.join(name);
        let _ = std::fs::remove_dir_all(&root);
        replay_clean_at(&root, trace, &[]);
        check(&root);
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn new(source: &Path, at: &Path, options: &[&str]) -> Mount {
        std::fs::create_dir_all(at).unwrap();
        let m = Command::new("mount")
            .args(options)
            .arg(source)
            .arg(at)
            .output()
            .unwrap();
        assert!(m.status.success(), "mount: {}", show(&m));
        Mount(at.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Calls that failed because of where the recording ran, not because of
/// the files: `mv` from another file system (a tmpfs `/tmp`, as on Debian
/// 13, Fedora or Arch) tries `rename`, which fails with `EXDEV`, then
/// copies and unlinks (`cp` tries `ioctl(FICLONE)` and `copy_file_range`,
/// which fail the same way); a read-only mount refuses with `EROFS`; a
/// running program's file refuses writers with `ETXTBSY`; `ulimit -f`
/// refuses a write with `EFBIG`. The replay root is one writable file
/// system, and replay runs no program and sets no limit, so each such
/// call would succeed: replay takes it as one that did nothing (before,
/// 41 mismatches and 3 paths differing for the moves alone: the replayed
/// `rename` moved the file the copy then read).
#[test]
fn calls_refused_by_mounts_or_running_programs_replay_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let other = Mount::tmpfs(tmp.path(), "other", "rw");
    let read_only = Mount::tmpfs(tmp.path(), "ro", "ro");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let (t, ro) = (other.0.display(), read_only.0.display());
    let script = format!(
        "echo data > {t}/x && mv {t}/x moved && cp moved {t}/copy && mv moved {t}/back \
         && cat {t}/back {t}/copy > both; touch {ro}/f; mkdir {ro}/d; \
         cp /bin/sleep s; ./s 1 & until [ \"$(readlink /proc/$!/exe)\" = \"$PWD/s\" ]; \
         do sleep 0.01; done; echo x > s; wait; (ulimit -f 8; trap '' XFSZ; seq 100000 > big)"
    );
    for backend in ["ptrace", "auto"] {
        for f in ["back", "copy"] {
            let _ = std::fs::remove_file(other.0.join(f));
        }
        let trace = record_with(tmp.path(), &work, backend, &["bash", "-c", &script]);
        assert_eq!(
            std::fs::read_to_string(work.join("both")).unwrap(),
            "data\ndata\n"
        );
        let text = dump(&trace);
        for errno in ["EXDEV", "EROFS", "ETXTBSY", "EFBIG"] {
            assert!(
                text.lines()
                    .any(|l| l.contains(&format!(") = -1 {errno} "))),
                "{backend}: no call failed with {errno}:\n{text}"
            );
        }
        let err = replay_clean(tmp.path(), &trace, &[]);
        assert!(err.contains(" 0 mismatches"), "{backend}: {err}");
    }
}

/// `cp` on XFS (and btrfs) clones a file with `ioctl(FICLONE)`: none of
/// its bytes pass through a system call. Replayed onto ext4 the clone
/// becomes a copy, onto XFS a clone again; either way the file ends up
/// byte for byte as recorded (it stayed empty in replay before).
#[test]
fn cp_on_xfs_clones_and_replays_onto_any_file_system() {
    let tmp = tempfile::tempdir().unwrap();
    let xfs = Mount::image(tmp.path(), "xfs");
    let work = xfs.0.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let data: Vec<u8> = (0..3_000_001u32)
        .map(|i| (i * 7 + i / 4096) as u8)
        .collect();
    std::fs::write(work.join("src.bin"), &data).unwrap();
    for backend in ["ptrace", "auto"] {
        let _ = std::fs::remove_file(work.join("dst.bin"));
        let trace = record_with(tmp.path(), &work, backend, &["cp", "src.bin", "dst.bin"]);
        let text = dump(&trace);
        assert!(
            text.lines()
                .any(|l| l.contains("ioctl(") && l.contains(", FICLONE, ") && l.contains(") = 0")),
            "{backend}: cp did not clone on XFS:\n{text}"
        );
        // Onto ext4 (the temporary directory): copied.
        replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work);
        assert_eq!(std::fs::read(replayed.join("dst.bin")).unwrap(), data);
        // Onto XFS: cloned.
        xfs.replay_clean(&trace, "root", |_| {});
    }
}

/// Copies between descriptors in one call each (see
/// `tests/programs/copies.c`), replayed onto btrfs, whose
/// `copy_file_range` stops at the last whole block: replay goes on until
/// the recorded count moved. Before, the first copy returned 49,152 where
/// 50,000 were recorded, and the file differed.
#[test]
fn copies_between_descriptors_replay_whole_onto_btrfs() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "copies");
    let btrfs = Mount::image(tmp.path(), "btrfs");
    for backend in ["ptrace", "auto"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        assert!(
            std::fs::read(work.join("dst")).is_ok_and(|d| d.len() == 100_000),
            "{backend}: copies did not finish"
        );
        replay_clean(tmp.path(), &trace, &[]);
        btrfs.replay_clean(&trace, "root", |root| {
            assert_eq!(
                std::fs::read(under(root, &work).join("dst")).unwrap(),
                std::fs::read(work.join("dst")).unwrap(),
                "{backend}"
            );
        });
    }
}

/// A name made in a directory after its `opendir` and before its first
/// `readdir`: btrfs fixes what a stream lists at the open, ext4 at the
/// first read, so whether the name is listed is the file system's choice
/// (POSIX leaves it unspecified). Replay took the stream to begin at its
/// first `getdents64`, and onto btrfs the listing mismatched ("missing
/// [\"new\"]", 3 runs of 3).
#[test]
fn a_name_made_between_opendir_and_readdir_may_be_listed_or_not() {
    require("perl");
    let tmp = tempfile::tempdir().unwrap();
    let btrfs = Mount::image(tmp.path(), "btrfs");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("d")).unwrap();
    std::fs::write(work.join("d/old"), "x").unwrap();
    let script = "opendir D, 'd' or die; open F, '>d/new' or die; close F; \
                  my @names = grep { !/^\\./ } readdir D; open O, '>count'; print O scalar(@names)";
    let trace = record(tmp.path(), &work, &["perl", "-e", script]);
    assert!(work.join("count").exists());
    replay_clean(tmp.path(), &trace, &[]);
    btrfs.replay_clean(&trace, "root", |_| {});
}

/// `fallocate` in each of its visible modes, replayed onto ext2, which
/// cannot allocate (`EOPNOTSUPP`): replay makes what a program sees of it,
/// the size and the zeros. Before, each call mismatched and the file
/// ended at the wrong size (Go's linker and `mkfs.ext4` allocate too).
/// Collapsing and inserting a range (which btrfs and tmpfs lack too)
/// move the bytes after it; until the seventeenth session each
/// mismatched and the file differed.
#[test]
fn allocations_replay_onto_a_file_system_without_fallocate() {
    require("fallocate");
    let tmp = tempfile::tempdir().unwrap();
    let ext2 = Mount::image(tmp.path(), "ext2");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let script = "head -c 100000 /dev/urandom > f && fallocate -l 300000 f \
                  && fallocate -z -o 5000 -l 10000 f && fallocate -p -o 40000 -l 20000 f \
                  && fallocate -n -o 0 -l 900000 f && fallocate -z -o 290000 -l 30000 f \
                  && fallocate -c -o 65536 -l 8192 f && fallocate -i -o 4096 -l 12288 f \
                  && stat -c %s f > size && cat f | md5sum > sum";
    for backend in ["ptrace", "auto"] {
        let trace = record_with(tmp.path(), &work, backend, &["sh", "-c", script]);
        assert_eq!(
            std::fs::read_to_string(work.join("size")).unwrap().trim(),
            "324096",
            "{backend}: the script did not finish"
        );
        ext2.replay_clean(&trace, "root", |_| {});
    }
}

/// `O_DIRECT` refuses buffers that are not aligned: replay hands the
/// kernel aligned copies (before, every direct write and read of these
/// two programs failed with `EINVAL`). fio's `psync` engine reads and
/// writes with `pread64`/`pwrite64`, `pvsync2` with `preadv2`/`pwritev2`.
#[test]
fn direct_io_replays_clean() {
    require("fio");
    let (tmp, work) = scratch();
    let fio = |engine: &str| {
        format!(
            "fio --name=d --ioengine={engine} --direct=1 --rw=randrw --bs=8k --size=256k \
             --filename=f-{engine} --output=/dev/null"
        )
    };
    let script = format!(
        "dd if=/dev/zero of=dd.out bs=64k count=8 oflag=direct 2>/dev/null && {} && {}",
        fio("psync"),
        fio("pvsync2")
    );
    for backend in ["ptrace", "auto"] {
        let trace = record_with(tmp.path(), &work, backend, &["sh", "-c", &script]);
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// fio's splice engine moves data through a pipe with `splice` and
/// `vmsplice`, whose iovecs carry data to the kernel on a pipe's write end
/// and from it on the read end (replay once stood 10 s on every read-end
/// call, taking it for a write to a full pipe). Its first `vmsplice` fails
/// with `EFAULT`, which replay does not issue. The POSIX AIO engine is
/// glibc's threads issuing `pread64`/`pwrite64`.
#[test]
fn fio_splice_and_posix_aio_engines_replay_clean() {
    require("fio");
    let (tmp, work) = scratch();
    let script = "for e in splice posixaio; do fio --name=$e --ioengine=$e --rw=randrw --bs=4k \
                  --size=256k --filename=f-$e --fsync=4 --output=/dev/null || exit 1; done";
    for backend in ["ptrace", "auto"] {
        let trace = record_with(tmp.path(), &work, backend, &["sh", "-c", script]);
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// A 300 MiB shared mapping with stores all along it, still mapped at
/// `exit_group` (see `tests/programs/shared_map_exit.c`): both recorders
/// cut its capture at 256 MiB (`CAPTURE_MAX`), so the stores past it were
/// missing and `m.bin` differed. Now it goes out in pieces; and ptrace
/// reads only the pages that hold any, not all 300 MiB.
#[test]
fn a_shared_mapping_larger_than_a_capture_keeps_every_store() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "shared_map_exit");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let argv = [exe.to_str().unwrap(), "300", "1024", "random"];
        let trace = record_with(tmp.path(), &work, backend, &argv);
        replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work);
        same_files(&replayed, &work, &["m.bin"], backend);
    }
}

/// An 8 MiB shared mapping stored to on every page, still mapped at
/// `exit_group`, recorded with eBPF through a 1 MiB ring: the BPF program,
/// which cannot wait for the ring to drain, lost records ("error: 1
/// events were lost"). The recorder now captures it while the gate holds
/// the `exit_group`.
#[test]
fn a_shared_mapping_larger_than_the_ring_is_captured_at_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "shared_map_exit");
    let work = work_for(tmp.path(), "ebpf");
    let trace = tmp.path().join("t.rtr");
    let rec = output_within(
        Command::new(bin())
            .current_dir(&work)
            .args(["record", "--backend", "ebpf", "--ring-size", "1M", "-o"])
            .arg(&trace)
            .args(["--", exe.to_str().unwrap(), "8", "4"])
            .stdin(Stdio::null()),
        Duration::from_secs(300),
    );
    assert!(rec.status.success(), "record: {}", show(&rec));
    replay_clean(tmp.path(), &trace, &[]);
    let replayed = under(&tmp.path().join("root"), &work);
    same_files(&replayed, &work, &["m.bin"], "ebpf");
}

/// A 32 MiB mapping unmapped before the exit, through a 1 MiB ring: the
/// `munmap` capture must be in the ring at once (the memory is gone when
/// the call returns), so records are lost, and the recording says so, why
/// and what to do, with its summary line, and fails; `stats` of the
/// trace says that its counts miss the lost events.
#[test]
fn a_munmap_larger_than_the_ring_fails_loudly() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "shared_map_exit");
    let work = work_for(tmp.path(), "ebpf");
    let rec = output_within(
        Command::new(bin())
            .current_dir(&work)
            .args([
                "record",
                "--backend",
                "ebpf",
                "--ring-size",
                "1M",
                "-o",
                "t.rtr",
            ])
            .args(["--", exe.to_str().unwrap(), "32", "4", "unmap"])
            .stdin(Stdio::null()),
        Duration::from_secs(300),
    );
    let err = String::from_utf8_lossy(&rec.stderr);
    assert_eq!(rec.status.code(), Some(1), "{err}");
    assert!(
        err.contains("records did not fit in the ring")
            && err.contains("--ring-size or --backend ptrace")
            && err.contains("syscalls,")
            && err.contains("events were lost"),
        "{err}"
    );
    let stats = Command::new(bin())
        .arg("stats")
        .arg(work.join("t.rtr"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(
        text.contains("lost while recording: not in these counts"),
        "{text}"
    );
}

/// fio's mmap engine: two job processes store into the file through a
/// `PROT_WRITE`-only shared mapping that is still mapped when they exit.
/// The stores were lost (captured only at `munmap`); ptrace then could not
/// read a mapping without `PROT_READ` (`process_vm_readv` refuses it), and
/// the eBPF recorder, listing mappings at exit, took fio's 16 MiB shared
/// anonymous segments for files and lost events in the flood.
#[test]
fn fio_mmap_engine_replays_clean() {
    require("fio");
    let (tmp, work) = scratch();
    let args = [
        "fio",
        "--name=m",
        "--ioengine=mmap",
        "--rw=randwrite",
        "--bs=4k",
        "--size=2m",
        "--filename=f-mmap",
        "--numjobs=2",
        "--output=/dev/null",
    ];
    for backend in ["ptrace", "auto"] {
        let trace = record_with(tmp.path(), &work, backend, &args);
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// File operations whose replay needs more than a path (see
/// `tests/programs/fileops.c`). An `O_TMPFILE` file linked through
/// `/proc/self/fd/N` with `AT_SYMLINK_FOLLOW` once failed with `EPERM`:
/// replay linked the directory the file was opened in.
#[test]
fn file_operations_by_descriptor_replay_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "fileops");
    for backend in ["ptrace", "auto"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        // The program's last call ran: it stops at the first that fails.
        let last = std::fs::metadata(work.join("fromfd")).map(|m| m.len());
        assert_eq!(last.ok(), Some(5), "fileops did not finish under {backend}");
        for order in ["overlap", "strict"] {
            replay_clean(tmp.path(), &trace, &["--order", order]);
        }
    }
}

/// A program removes entries of a directory while it reads it (see
/// `tests/programs/listdel.c`): which removed names the rest of the
/// listing still returns is unspecified and differs between file systems,
/// so replay onto another one (a tmpfs, recorded on the disk) leaves
/// those names out of the comparison. Before, the listing mismatched
/// (`dpkg -r` replayed onto btrfs: 1 mismatch).
#[test]
fn entries_removed_during_a_listing_replay_clean_on_another_file_system() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "listdel");
    let other = Mount::tmpfs(tmp.path(), "other", "rw");
    for backend in ["ptrace", "auto"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        assert!(
            dump(&trace).contains("getdents64("),
            "{backend}: the program listed nothing"
        );
        other.replay_clean(&trace, "root", |_| {});
    }
}

/// Reads of a file that a shared writable mapping stores into, before the
/// trace has the stores (see `tests/programs/mapreads.c`; Go's telemetry
/// counter files, which a child of the go command reads): the recorded
/// bytes are what the stores put there, and replay stores them through
/// its mapping of the file. Before, each read mismatched (a `go run`
/// trace: 1 mismatch with each back end).
#[test]
fn reads_of_stores_through_a_live_mapping_replay_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "mapreads");
    for backend in ["ptrace", "auto"] {
        let work = work_for(tmp.path(), backend);
        let mut cmd = Command::new(bin());
        cmd.args(["record", "--backend", backend, "-o"])
            .arg(tmp.path().join(format!("{backend}.rtr")))
            .arg("--")
            .arg(&exe)
            .current_dir(&work)
            .stdin(Stdio::null());
        let rec = output_within(&mut cmd, Duration::from_secs(120));
        assert!(rec.status.success(), "{backend}: {}", show(&rec));
        assert_eq!(
            String::from_utf8_lossy(&rec.stdout),
            "own: 0 7 8 0\nchild read: 0 0 7 8 0\nchild pread: 0 9\nafter: 0 10 8\n",
            "{backend}"
        );
        let trace = tmp.path().join(format!("{backend}.rtr"));
        let err = replay_clean(tmp.path(), &trace, &[]);
        // The process's own read stores bytes 100-101, which the child's
        // read then finds; its pread stores byte 8000.
        assert!(
            err.contains("2 reads found bytes stored through shared mappings before the trace captured the stores; 3 bytes"),
            "{backend}: {err}"
        );
    }
}

/// A tree deeper than `PATH_MAX` (see `tests/programs/deep.c`): the
/// program names its files relative to a working directory whose absolute
/// name is 5,250 bytes long. Before, the recorders could not name that
/// directory (`/proc/PID/cwd` says `ENAMETOOLONG`) and silently left its
/// files out of the initial and final states, and replay, resolving the
/// same absolute names, failed every call there with `ENAMETOOLONG`.
#[test]
fn a_tree_deeper_than_path_max_replays_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "deep");
    for backend in ["ptrace", "auto"] {
        let work = work_for(tmp.path(), backend);
        let prepared = output_within(
            Command::new(&exe)
                .arg("prepare")
                .current_dir(&work)
                .stdin(Stdio::null()),
            Duration::from_secs(60),
        );
        assert!(prepared.status.success(), "{}", show(&prepared));
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        let out = Command::new(bin())
            .args(["dump", "-s", "16384"])
            .arg(&trace)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        // The final state holds the deepest files, with their sizes, and
        // the directory made half way up.
        let after = |name: &str, what: &str, longer_than: usize| {
            text.lines().any(|l| {
                l.contains("*** path after")
                    && l.contains(&format!("/{name}\""))
                    && l.contains(what)
                    && l.len() > longer_than
            })
        };
        assert!(
            after("leaf2", "size 5 ", 5000)
                && after("old", "size 13 ", 5000)
                && after("half", "dir ", 2500),
            "{backend}: the deepest paths are missing from the final state"
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// A child that changes its root (see `tests/programs/chroot.c`).
/// Before, neither the recorders nor replay knew a process's root:
/// `/inside` was recorded and replayed at the top of the tree, the
/// listing of the new `/` mismatched, and `/pre` was not there.
#[test]
fn a_process_that_changes_its_root_replays_clean() {
    require_root("records chroot");
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "chroot");
    for backend in ["ptrace", "auto"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        assert!(
            work.join("jail/sub/moved").exists() && work.join("jail/d2/f").exists(),
            "the program did not finish under {backend}"
        );
        let root = tmp.path().join("root");
        let _ = std::fs::remove_dir_all(&root);
        replay_clean_at(&root, &trace, &[]);
        let replayed = under(&root, &work);
        assert!(replayed.join("jail/sub/moved").exists(), "{backend}");
    }
}

/// Calls a seccomp filter refused (see `tests/programs/seccomp.c`): the
/// kernel ran none of them. Before, the ptrace recorder recorded a call
/// refused with a signal as returning its own number (`unlink(...) = 87`,
/// the registers seccomp rolls back), and replay executed refused calls:
/// each file was removed in replay (7 mismatches and 3 differing paths).
/// Now such calls are recorded as never returned, and a thread
/// under a filter has its failed calls simulated. The eBPF recorder does
/// not see refused calls enter (the tracepoints fire after seccomp), only
/// return: it counts them in a loss record rather than dropping them
/// unsaid.
#[test]
fn calls_a_seccomp_filter_refused_are_not_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "seccomp");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        let out = std::fs::read_to_string(work.join("out")).unwrap();
        assert_eq!(
            out, "victim-errno: exit 0\nvictim-trap: exit 0\nvictim-kill: signal 31\n",
            "{backend}"
        );
        let trap = std::fs::read_to_string(work.join("victim-trap")).unwrap();
        assert!(trap.ends_with("trapped 1\n"), "{backend}: {trap}");
        if backend == "ptrace" {
            let text = dump(&trace);
            assert!(
                text.lines()
                    .filter(|l| l.contains("unlink(") && l.ends_with("= ?"))
                    .count()
                    == 2,
                "the calls refused with a signal are recorded as never returned:\n{text}"
            );
        } else {
            let text = dump(&trace);
            assert!(
                text.contains("seccomp filter refused them"),
                "the calls seen only returning are counted:\n{text}"
            );
        }
        let root = tmp.path().join("root");
        let _ = std::fs::remove_dir_all(&root);
        replay_clean_at(&root, &trace, &[]);
        let replayed = under(&root, &work);
        same_files(
            &replayed,
            &work,
            &["victim-errno", "victim-trap", "victim-kill", "out"],
            backend,
        );
    }
}

/// Descriptors passed over a socket (see `tests/programs/fdpass.c`): the
/// child writes through a file description it shares with its parent.
/// Before, the message's control data was not captured, replay did not
/// know the child had the descriptors, and every call on them failed with
/// `EBADF` (3 mismatches and 2 files differing).
/// Now each received descriptor shares its sender's description, under
/// every order, and only the other end of the same socket pair takes it
/// (with one queue for all sockets, the one sent over an unread pair
/// first was taken: 2 files differed; with one per pair, each end got
/// back what it had sent itself), and a `MSG_PEEK` leaves it for the
/// receive that follows. The same over connections to a named socket
/// (`fdpass named`): those shared one queue, and 4 files differed with no
/// mismatch; the nth connect to a name is now paired with the nth accept.
/// The socket file `bind` makes has its state from before the `bind`
/// (absent): it was recorded at the first later call naming it, as a
/// socket, which replay's preparation said it had not made.
#[test]
fn descriptors_passed_over_a_socket_share_the_senders_file() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "fdpass");
    for (backend, mode) in [
        ("ptrace", None),
        ("ebpf", None),
        ("ptrace", Some("named")),
        ("ebpf", Some("named")),
    ] {
        let work = tmp
            .path()
            .join(format!("work-{backend}-{}", mode.unwrap_or("pair")));
        std::fs::create_dir_all(&work).unwrap();
        let argv: Vec<&str> = std::iter::once(exe.to_str().unwrap()).chain(mode).collect();
        let trace = record_with(tmp.path(), &work, backend, &argv);
        let a = std::fs::read_to_string(work.join("a.txt")).unwrap();
        assert_eq!(a, "parent\nchild\nparent again\n", "{backend} {mode:?}");
        if mode.is_some() {
            let before = format!("path before \"{}\": absent", work.join("s.sock").display());
            assert!(
                dump_whole(&trace).contains(&before),
                "{backend}: no `{before}`"
            );
        }
        for order in ["overlap", "strict", "commute"] {
            let root = tmp.path().join("root");
            let _ = std::fs::remove_dir_all(&root);
            let err = replay_clean_at(&root, &trace, &["--order", order]);
            assert!(!err.contains("not created"), "{backend} {mode:?}: {err}");
            let replayed = under(&root, &work);
            same_files(
                &replayed,
                &work,
                &[
                    "a.txt",
                    "b.txt",
                    "child.txt",
                    "from-child.txt",
                    "from-parent.txt",
                ],
                &format!("{backend} {mode:?}, {order}"),
            );
        }
    }
}

/// Children started while another thread makes or closes pipes (see
/// `tests/programs/forkpipe.c`, Go's `os/exec`): replay copied a child's
/// descriptor table when it replayed the fork, after a `close` another
/// thread began before the kernel's copy (a vfork lasts until its child
/// execs), so the child held a pipe's write end the real one never had
/// and the reader of that pipe, whose end of file was recorded, waited
/// 10 s for it (a sweep's `go build`: 3 replays in 5; this program: 14 in
/// 32). The race is the recording's, so a run may not show it; each
/// recording is replayed under two orders.
#[test]
fn children_started_while_other_threads_close_pipes_replay_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "forkpipe");
    for (backend, mode) in [
        ("ptrace", "vfork"),
        ("ebpf", "vfork"),
        ("ptrace", "fork"),
        ("ebpf", "fork"),
    ] {
        let work = tmp.path().join(format!("work-{backend}-{mode}"));
        std::fs::create_dir_all(&work).unwrap();
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap(), mode]);
        assert_eq!(
            std::fs::read_to_string(work.join("done.txt")).unwrap(),
            "200 children\n",
            "{backend} {mode}"
        );
        for order in ["overlap", "strict"] {
            replay_clean(tmp.path(), &trace, &["--order", order]);
        }
    }
}

/// `writev` and `sendmsg` from file mappings the program never touched
/// (see `tests/programs/untouched.c`): the eBPF recorder cannot fault
/// such a page in at the call's entry, so it reads the bytes again when
/// the call returns; they once went into the trace as unreadable and
/// replay wrote zeros with no mismatch. An `execve` argument from such a
/// page is read again from the new image (it showed as `""`). The bytes
/// are there under both back ends, and a capture made unreadable by hand
/// (the case that remains: the page gone again before the call returned)
/// is a mismatch saying how many bytes were lost. A `write` that failed
/// (`EBADF`) from such a page took none of its unreadable bytes: no
/// mismatch (there was one, under eBPF, before 2026-11-29).
#[test]
fn inputs_in_pages_never_touched_are_captured_and_lost_ones_are_a_mismatch() {
    use reanimator_trace::{CaptureStatus, ReadOptions, Reader, Record, Role, Writer};
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "untouched");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        std::fs::write(work.join("in.bin"), "ab\n").unwrap();
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        let text = dump(&trace);
        for call in ["writev(", "sendmsg(", "execve(\"/bin/true\""] {
            assert!(
                text.lines()
                    .any(|l| l.contains(call) && l.contains("\"ab\\n\"")),
                "{backend}: {call} without its bytes:\n{text}"
            );
        }
        replay_clean(tmp.path(), &trace, &[]);
        if backend == "ptrace" {
            continue;
        }
        // The same trace with the mapped element's bytes unreadable.
        let lost = tmp.path().join("lost.rtr");
        let mut r = Reader::open(&trace, ReadOptions { data: true }).unwrap();
        let mut w = Writer::create(&lost, r.meta(), Default::default()).unwrap();
        let mut marked = 0;
        while let Some(mut rec) = r.next_record().unwrap() {
            if let Record::Syscall(e) = &mut rec {
                if e.nr == libc::SYS_writev as u32 {
                    for c in &mut e.captures {
                        if c.role == Role::Entry && c.elem == 1 {
                            c.status = CaptureStatus::Unreadable;
                            c.captured = 0;
                            c.data = None;
                            marked += 1;
                        }
                    }
                }
            }
            w.write(&rec).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(marked, 1);
        let out = output_within(
            Command::new(bin())
                .args(["replay", "--root"])
                .arg(tmp.path().join("lost-root"))
                .arg(&lost),
            Duration::from_secs(60),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("3 bytes it was given could not be read when recorded: replayed as zeros"),
            "{err}"
        );
    }
}

/// Processes taking turns on a counter file under `flock`, open file
/// description locks and `lockf` (see `tests/programs/locks.c`). Replay
/// runs every process in one, so an executed `flock` blocked the replay
/// thread whose lock another thread held, while that one waited for its
/// turn: the replay hung (found with `flock(1)` in a shell loop).
#[test]
fn processes_taking_turns_under_file_locks_replay_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "locks");
    for backend in ["ptrace", "auto"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        for name in ["flock.count", "ofd.count", "lockf.count"] {
            let count = std::fs::read_to_string(work.join(name)).unwrap_or_default();
            assert_eq!(count, "200\n", "{name} under {backend}");
        }
        for order in ["overlap", "strict"] {
            replay_clean(tmp.path(), &trace, &["--order", order]);
        }
    }
}

/// Pipes opened again by name: bash's process substitution hands
/// `join <(sort a) <(sort b)` the names `/dev/fd/63` and `/dev/fd/62`,
/// and `cat /dev/stdin` reopens its standard input. Replay once
/// simulated those opens and their reads, so the real writers (sort,
/// 1.3 MB each, more than a replayed pipe holds) stood 10 s on a full
/// pipe and their writes were not issued.
#[test]
fn pipes_opened_by_their_dev_fd_names_replay_clean() {
    for tool in ["bash", "seq", "sort", "join", "cat"] {
        require(tool);
    }
    let (tmp, work) = scratch();
    let script = "seq 1 200000 > a && seq 100000 300000 > b && \
                  join <(sort a) <(sort b) > joined && \
                  sort -r a | cat /dev/stdin > reversed && cat /dev/stdin < b > copy";
    for backend in ["ptrace", "auto"] {
        let trace = record_with(tmp.path(), &work, backend, &["bash", "-c", script]);
        let joined = std::fs::read_to_string(work.join("joined")).unwrap_or_default();
        assert_eq!(joined.lines().count(), 100_001, "join under {backend}");
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// Device nodes a program makes (`tar` extracting a root file system as
/// root): replay makes them inert, numbered 0:0, so they have the
/// recorded type and mode and reach no device, and simulates calls
/// through them. Until 2026-11-27 they were not made at all: `echo x >
/// nul` then made a regular file, and 7 calls and 2 paths mismatched.
#[test]
fn device_nodes_replay_inert() {
    require_root("records mknod of device nodes");
    let (tmp, work) = scratch();
    let script =
        "umask 022 && mknod nul c 1 3 && mknod blk b 7 0 && echo x > nul && cat nul > got && \
                  stat -c '%F %a' nul blk > types && ls -l > listing";
    for backend in ["ptrace", "auto"] {
        let trace = record_with(tmp.path(), &work, backend, &["sh", "-c", script]);
        let types = std::fs::read_to_string(work.join("types")).unwrap_or_default();
        assert_eq!(
            types, "character special file 644\nblock special file 644\n",
            "{backend}"
        );
        let root = tmp.path().join("root");
        let _ = std::fs::remove_dir_all(&root);
        replay_clean_at(&root, &trace, &[]);
        use std::os::unix::fs::MetadataExt;
        let inside = under(&root, &work);
        for node in ["nul", "blk"] {
            let m = std::fs::symlink_metadata(inside.join(node)).unwrap();
            assert_eq!(m.rdev(), 0, "{node} under {backend} reaches a device");
        }
        for node in ["nul", "blk"] {
            std::fs::remove_file(work.join(node)).unwrap();
        }
    }
}

/// A session on a pseudo-terminal: `script` opens `/dev/ptmx`, takes the
/// terminal's other end with `ioctl(TIOCGPTPEER)`, which returns a new
/// descriptor, and its child makes that its standard input and output.
/// Replay did not know the descriptor, and the child's `dup2`s of it
/// failed with `EBADF` (eBPF recordings; found by a QA sweep).
#[test]
fn a_pseudo_terminal_session_replays_clean() {
    require("script");
    let (tmp, work) = scratch();
    for backend in ["ptrace", "auto"] {
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &["script", "-qc", "echo hi; ls / > listing", "typescript"],
        );
        let text = dump(&trace);
        assert!(text.contains("TIOCGPTPEER"), "{backend}:\n{text}");
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// Runs `reanimator record --force --backend BACKEND -o TRACE -- COMMAND`
/// through `sh` in `work`, so COMMAND's redirections (`> log 2>&1`, `<
/// in`) give the recorded command its descriptors, and asserts it ran.
fn record_redirected(work: &Path, trace: &Path, backend: &str, command: &str) {
    let script = format!(
        "{} record --force --backend {backend} -o {} -- {command}",
        bin(),
        trace.display()
    );
    let rec = output_within(
        Command::new("sh").current_dir(work).args(["-c", &script]),
        Duration::from_secs(300),
    );
    assert!(rec.status.success(), "{backend}: {}", show(&rec));
}

/// A command whose output was redirected into a file it also names
/// (`reanimator record -- build > build.log`, and the build lists its
/// directory): replay writes the output into that file again, from the
/// state it had before the command ran. Before, the output went nowhere
/// and the file's listing was recorded after the command had written to
/// it: a mismatched `stat` and a final state that differed.
#[test]
fn output_redirected_into_a_file_the_command_names_replays_clean() {
    let (tmp, work) = scratch();
    std::fs::write(work.join("app.log"), "from before\n").unwrap();
    let trace = tmp.path().join("t.rtr");
    for backend in ["ptrace", "auto"] {
        record_redirected(
            &work,
            &trace,
            backend,
            "sh -c 'echo one; ls -la; echo two; stat -c %s build.log app.log' > build.log",
        );
        record_redirected(
            &work,
            &trace.with_extension("rtr.append"),
            backend,
            "sh -c 'echo more; ls -l' >> app.log",
        );
        for (t, file) in [
            (trace.clone(), "build.log"),
            (trace.with_extension("rtr.append"), "app.log"),
        ] {
            let root = tmp.path().join("root");
            let _ = std::fs::remove_dir_all(&root);
            replay_clean_at(&root, &t, &[]);
            let replayed = under(&root, &work).join(file);
            assert_eq!(
                std::fs::read(&replayed).unwrap(),
                std::fs::read(work.join(file)).unwrap(),
                "{file} under {backend}"
            );
        }
    }
}

/// Files a spawned command inherits open for reading (`< in`) or for
/// reading and writing (`3<> f`) are opened again in replay, as output
/// files are: `cat < in > out` copies with `copy_file_range`, whose bytes
/// no trace holds, so until 2026-11-29 replay (simulating stdin) left
/// `out` empty, and never made `f` at all while calling the replay clean.
#[test]
fn files_inherited_for_reading_are_opened_again() {
    let (tmp, work) = scratch();
    let trace = tmp.path().join("t.rtr");
    for backend in ["ptrace", "auto"] {
        std::fs::write(work.join("in"), "1\n2\n3\n").unwrap();
        std::fs::write(work.join("f"), "hello\n").unwrap();
        record_redirected(
            &work,
            &trace,
            backend,
            "sh -c 'cat > out; echo HI >&3' < in 3<> f 2> /dev/null",
        );
        let root = tmp.path().join("root");
        let _ = std::fs::remove_dir_all(&root);
        replay_clean_at(&root, &trace, &[]);
        let replayed = under(&root, &work);
        for (file, want) in [("out", "1\n2\n3\n"), ("f", "HI\nlo\n")] {
            assert_eq!(
                std::fs::read_to_string(replayed.join(file)).ok().as_deref(),
                Some(want),
                "{file} under {backend}"
            );
        }
    }
}

/// A trace recorded with `--data max=N` holds only the first N bytes of
/// each buffer: replay warns that it cannot write the rest again, and
/// counts the read results it could not compare instead of passing over
/// them unsaid.
#[test]
fn buffers_the_trace_lacks_are_counted_not_compared() {
    let (tmp, work) = scratch();
    std::fs::write(work.join("in"), "x".repeat(100)).unwrap();
    let trace = tmp.path().join("t.rtr");
    let rec = output_within(
        Command::new(bin())
            .current_dir(&work)
            .args(["record", "--backend", "ptrace", "--data", "max=16", "-o"])
            .arg(&trace)
            .args(["--", "sh", "-c", "head -c 50 in > /dev/null"])
            .stdin(Stdio::null()),
        Duration::from_secs(300),
    );
    assert!(rec.status.success(), "{}", show(&rec));
    let err = replay_stderr(&trace, &tmp.path().join("root"));
    assert!(err.contains("recorded with --data max=16"), "{err}");
    let counted = err
        .lines()
        .find(|l| l.contains("returned buffers were not compared"))
        .unwrap_or_else(|| panic!("no count of buffers not compared:\n{err}"));
    assert!(counted.contains("truncated"), "{counted}");
}

/// `> log 2>&1`: the command's stdout and stderr are one open file
/// description, so their writes share one offset. Replay shares it too;
/// before 2026-11-29 it opened the file once per descriptor and the
/// writes through each overwrote the other's (`err1` gone, the final
/// state differing).
#[test]
fn stdout_and_stderr_into_one_file_share_its_offset() {
    let (tmp, work) = scratch();
    let trace = tmp.path().join("t.rtr");
    for backend in ["ptrace", "auto"] {
        record_redirected(
            &work,
            &trace,
            backend,
            "sh -c 'echo out1; echo err1 >&2; echo out2; head -c 99 both.log > /dev/null' \
             > both.log 2>&1",
        );
        let out = Command::new(bin())
            .args(["dump", "--json"])
            .arg(&trace)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(r#""same_as":1"#), "{backend}:\n{text}");
        let root = tmp.path().join("root");
        let _ = std::fs::remove_dir_all(&root);
        replay_clean_at(&root, &trace, &[]);
        let replayed = std::fs::read(under(&root, &work).join("both.log")).unwrap();
        // The recorder's own summary follows in the real file.
        assert_eq!(
            String::from_utf8_lossy(&replayed),
            "out1\nerr1\nout2\n",
            "{backend}"
        );
    }
}

/// Starts `reanimator record --backend ptrace -o TRACE -p PID` and waits
/// (up to a minute) for its first line, which says it attaches. Returns
/// the recorder, that line, and a thread that collects the rest of its
/// stderr.
fn attach_with_ptrace(
    trace: &Path,
    pid: u32,
) -> (std::process::Child, String, std::thread::JoinHandle<String>) {
    let mut recorder = Command::new(bin())
        .args(["record", "--backend", "ptrace", "-o"])
        .arg(trace)
        .args(["-p", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(recorder.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut line = String::new();
        let _ = stderr.read_line(&mut line);
        let _ = tx.send(line);
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
        rest
    });
    let first = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
    (recorder, first, reader)
}

/// Waits up to two minutes for `child` to end, killing it after that.
fn ended_within(child: &mut std::process::Child) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A process recorded by attaching to it (`record -p PID`) writes and
/// reads through descriptors it opened before the attach: an appended
/// log it then only stats, and a file open for reading and writing. The
/// recorder records both files as it attaches, and replay opens them
/// again at their offsets. Before, those descriptors were simulated: the
/// log's state came from the `stat` (its size after the first write, no
/// contents) and `rest` was empty (1 mismatch, 2 differing paths).
#[test]
fn files_a_process_had_open_before_an_attach_replay_clean() {
    require_root("attaching to a process with ptrace");
    let (tmp, work) = scratch();
    std::fs::write(work.join("log"), "old\n").unwrap();
    std::fs::write(work.join("db"), "0123456789\n").unwrap();
    // Waits for a line on stdin, sent once the recorder has attached.
    let mut program = Command::new("sh")
        .current_dir(&work)
        .args([
            "-c",
            "exec 3>>log 4<>db; read -r go; echo new >&3; stat -c %s log > size; \
             echo more >&3; echo AB >&4; cat <&4 > rest; cat db > whole",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let trace = tmp.path().join("t.rtr");
    let (mut recorder, first, reader) = attach_with_ptrace(&trace, program.id());
    std::thread::sleep(Duration::from_millis(500));
    {
        use std::io::Write;
        let mut stdin = program.stdin.take().unwrap();
        let _ = stdin.write_all(b"go\n");
    }
    let status = ended_within(&mut recorder);
    if status.is_none() {
        let _ = program.kill();
    }
    let _ = program.wait();
    let err = first.clone() + &reader.join().unwrap();
    assert!(first.contains("attaching to"), "{err}");
    assert!(status.is_some_and(|s| s.success()), "{status:?}: {err}");
    assert_eq!(
        std::fs::read_to_string(work.join("rest")).unwrap(),
        "3456789\n"
    );
    let root = tmp.path().join("root");
    replay_clean_at(&root, &trace, &[]);
    let replayed = under(&root, &work);
    for file in ["log", "db", "rest", "whole", "size"] {
        assert_eq!(
            std::fs::read(replayed.join(file)).unwrap(),
            std::fs::read(work.join(file)).unwrap(),
            "{file}"
        );
    }
}

/// Detaching (Ctrl-C) from a process that goes on writing: the recorder
/// keeps every thread stopped until the final state is recorded, so the
/// manifest holds what the trace wrote and nothing the program wrote
/// after; a call a thread had finished when it stopped is recorded as
/// returned. Two threads append to their own files as fast as they can.
/// Before, the manifest was read after the detach (the files differed
/// by what the program wrote meanwhile), and a call caught at its exit
/// was recorded as unfinished though it had run.
#[test]
fn detaching_from_a_process_that_goes_on_writing_replays_clean() {
    require_root("attaching to a process with ptrace");
    require("python3");
    let (tmp, work) = scratch();
    let script = "import threading, os\n\
                  def run(name):\n\
                  \x20   f = open(name, 'a')\n\
                  \x20   i = 0\n\
                  \x20   while not os.path.exists('stop'):\n\
                  \x20       f.write('%d\\n' % i); f.flush(); i += 1\n\
                  t = threading.Thread(target=run, args=('a.log',))\n\
                  t.start(); run('b.log'); t.join()\n";
    let mut program = Command::new("python3")
        .current_dir(&work)
        .args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let grown = |name: &str| std::fs::metadata(work.join(name)).map_or(0, |m| m.len()) > 1000;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !(grown("a.log") && grown("b.log")) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let trace = tmp.path().join("t.rtr");
    let (mut recorder, first, reader) = attach_with_ptrace(&trace, program.id());
    // Records for a while, then detaches.
    let size = || std::fs::metadata(&trace).map_or(0, |m| m.len());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while size() < 200_000 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(recorder.id() as i32, libc::SIGINT) };
    let status = ended_within(&mut recorder);
    // The program writes on after the detach, then stops.
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(work.join("stop"), "").unwrap();
    if ended_within(&mut program).is_none() {
        panic!("the program did not stop");
    }
    let err = first.clone() + &reader.join().unwrap();
    assert!(first.contains("attaching to"), "{err}");
    assert!(status.is_some_and(|s| s.success()), "{status:?}: {err}");
    let root = tmp.path().join("root");
    let report = replay_clean_at(&root, &trace, &[]);
    assert!(report.contains("0 differ"), "{report}");
}

/// The recorder's own messages while the command runs (here, after 2 s,
/// that a daemon the command left behind keeps the recording going) stay
/// out of the command's output file when stderr is that file: with no
/// terminal they are held until the trace is finished. Before, the message
/// was part of `build.log`'s recorded final state, and every replay of
/// `record -- cmd > build.log 2>&1` reported the file differing.
#[test]
fn recorder_messages_stay_out_of_the_commands_output_file() {
    let (tmp, work) = scratch();
    let trace = tmp.path().join("t.rtr");
    for backend in ["ptrace", "auto"] {
        let script = format!(
            "{} record --force --backend {backend} -o {} -- sh -c 'echo start; \
             setsid sh -c \"sleep 5; echo late > late.txt\" < /dev/null > /dev/null 2>&1 & \
             echo end' > build.log 2>&1",
            bin(),
            trace.display(),
        );
        // setsid: no controlling terminal, where the message would go instead.
        let rec = output_within(
            Command::new("setsid")
                .current_dir(&work)
                .args(["-w", "sh", "-c", &script])
                .stdin(Stdio::null()),
            Duration::from_secs(300),
        );
        assert!(rec.status.success(), "{backend}: {}", show(&rec));
        let log = std::fs::read_to_string(work.join("build.log")).unwrap();
        let message = log.find("the recording goes on until what it left running");
        let summary = log.find("reanimator: ");
        assert!(
            log.starts_with("start\nend\n") && message.is_some() && summary.is_some(),
            "{backend}: {log}"
        );
        let root = tmp.path().join("root");
        let _ = std::fs::remove_dir_all(&root);
        replay_clean_at(&root, &trace, &[]);
        let replayed = under(&root, &work).join("build.log");
        assert_eq!(
            std::fs::read_to_string(replayed).unwrap(),
            "start\nend\n",
            "{backend}"
        );
    }
}

/// A recording whose recorder was killed has initial states but no final
/// ones. Recovered and replayed, it says the final state was not checked,
/// rather than print "0 paths checked, 0 differ" as a clean replay does.
#[test]
fn a_recovered_trace_says_its_final_state_was_not_checked() {
    let (tmp, work) = scratch();
    let trace = tmp.path().join("t.rtr");
    let mut recorder = Command::new(bin())
        .current_dir(&work)
        .args(["record", "--backend", "ptrace", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", "cat /etc/hostname > f; sleep 60"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the initial states (the shell, libc) are on disk: a
    // recovery of the trace as it is holds one. (Waiting for a size was
    // not enough: under load the buffers' frames passed it before the
    // first frame of records was written.)
    let probe = tmp.path().join("probe.rtr");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let _ = std::fs::remove_file(&probe);
        let rec = output_within(
            Command::new(bin())
                .args(["recover", "-o"])
                .arg(&probe)
                .arg(&trace),
            Duration::from_secs(60),
        );
        if rec.status.success() && dump(&probe).contains("*** path before") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the recorder wrote no initial state"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    let recovered = tmp.path().join("r.rtr");
    let out = output_within(
        Command::new(bin())
            .args(["recover", "-o"])
            .arg(&recovered)
            .arg(&trace),
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "recover: {}", show(&out));
    let err = replay_stderr(&recovered, &tmp.path().join("root"));
    assert!(err.contains("holds no final state"), "{err}");
}

/// A program that looks at the trace being written (it is written in the
/// current directory by default, which a build lists): replay simulates
/// the calls naming it, and the final state leaves it out. Before, the
/// trace's size at a listing was prepared, later `stat`s of it mismatched
/// and the final state differed in it (`java M.java` stats its
/// directory's files).
#[test]
fn a_program_looking_at_its_own_trace_replays_clean() {
    let (tmp, work) = scratch();
    for backend in ["ptrace", "auto"] {
        let rec = output_within(
            Command::new(bin())
                .current_dir(&work)
                .args([
                    "record",
                    "--force",
                    "--backend",
                    backend,
                    "-o",
                    "own.rtr",
                    "--",
                ])
                .args([
                    "sh",
                    "-c",
                    "ls -la > listing; seq 1 50000 > nums; stat -c %s own.rtr > size; \
                     head -c 64 own.rtr > head; ls -la > listing2",
                ])
                .stdin(Stdio::null()),
            Duration::from_secs(300),
        );
        assert!(rec.status.success(), "{backend}: {}", show(&rec));
        let trace = tmp.path().join("own.rtr");
        std::fs::rename(work.join("own.rtr"), &trace).unwrap();
        replay_clean(tmp.path(), &trace, &[]);
        // A trace made from it keeps the path its recorder wrote (once
        // rewritten to the new file's: 6 mismatches).
        for command in ["select", "recover"] {
            let made = tmp.path().join(format!("{command}.rtr"));
            let o = Command::new(bin())
                .arg(command)
                .arg(&trace)
                .arg("-o")
                .arg(&made)
                .arg("--force")
                .output()
                .unwrap();
            assert!(o.status.success(), "{command}: {}", show(&o));
            replay_clean(tmp.path(), &made, &[]);
        }
    }
}

/// Processes that come and go fast (see `tests/programs/spawns.c`). Found
/// with `go build`: the ptrace recorder once recorded a second start for a
/// child whose stops came before its parent's fork event, and replay
/// waited for that child's birth for ever; the eBPF recorder lost the
/// ends of threads that passed their exit after their leader, and a pipe
/// they held never closed in replay; replay did not know descriptors
/// that `clone(CLONE_PIDFD)` made.
#[test]
fn processes_that_come_and_go_fast_replay_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "spawns");
    for backend in ["ptrace", "auto"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        let out = std::fs::read_to_string(work.join("out.txt")).unwrap_or_default();
        assert!(
            out.contains("round 19"),
            "spawns did not finish under {backend}: {out}"
        );
        let text = dump(&trace);
        // Every task started once and ended once: 20 rounds of 3
        // processes, one with 3 threads, and the program itself.
        let starts = text
            .lines()
            .filter(|l| l.contains(" === process ") || l.contains(" === thread "))
            .count();
        let ends = text.lines().filter(|l| l.contains(" +++ ")).count();
        assert_eq!(
            (starts, ends),
            (20 * 6 + 1, 20 * 6 + 1),
            "{backend}:\n{text}"
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// fio's `libaio` engine, the usual way to drive a device with a queue
/// depth: up to 8 direct requests in flight, reaped by `io_getevents`,
/// two jobs. Its requests and data are captured and replayed through the
/// kernel's AIO (before 2026-11-26 they were simulated, and the file
/// differed). Each job has its own file and never has two overlapping
/// requests in flight (`--serialize_overlap`): otherwise which of a
/// read and a write to the same block the device served first is a race
/// the trace does not order (1 CI run in 1 read other bytes).
#[test]
fn fio_libaio_engine_replays_clean() {
    require("fio");
    let (tmp, work) = scratch();
    let args = [
        "fio",
        "--name=aio",
        "--ioengine=libaio",
        "--direct=1",
        "--iodepth=8",
        "--rw=randrw",
        "--bs=4k",
        "--size=1m",
        "--numjobs=2",
        "--serialize_overlap=1",
        "--output=/dev/null",
    ];
    for backend in ["ptrace", "auto"] {
        let trace = record_with(tmp.path(), &work, backend, &args);
        replay_clean(tmp.path(), &trace, &[]);
        let text = dump(&trace);
        let submits = text.lines().filter(|l| l.contains(" io_submit(")).count();
        assert!(submits > 100, "{backend}: {submits} io_submit calls");
    }
}

/// A completion reaped by a call that blocked while the submitting thread
/// did a second or more of other calls first (MariaDB's InnoDB reaper):
/// replay starts the reaping call at once, and gave up waiting for the
/// submission after 1 s, leaving the completion unverified with a message
/// saying its submission was never captured. Now it waits while replay
/// moves on.
#[test]
fn a_completion_waits_for_a_submission_as_long_as_replay_moves_on() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "uring_late_submit");
    // Enough synced writes for replay to spend well over a second on them
    // on this machine's disk (about 0.2 ms each).
    let n = "12000";
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap(), n]);
        assert_eq!(
            std::fs::read_to_string(work.join("reaped")).unwrap(),
            "user_data=42 res=4096\n",
            "{backend}"
        );
        let err = replay_clean(tmp.path(), &trace, &[]);
        assert!(!err.contains("io_uring completions"), "{backend}: {err}");
        same_files(
            &under(&tmp.path().join("root"), &work),
            &work,
            &["out.dat", "reaped"],
            backend,
        );
    }
}

/// fio's io_uring engine: its requests live in rings shared with the
/// kernel, which the recorder reads at each `io_uring_enter`; replay
/// submits them to a ring of its own and the file comes out the same.
/// Then with registered files (`IORING_REGISTER_FILES`), whose requests
/// name the file by index: replay keeps which of its descriptors each
/// index stands for (before 2026-11-27 it issued none of them and the
/// file differed).
#[test]
fn fio_io_uring_engine_replays_clean() {
    require("fio");
    let (tmp, work) = scratch();
    let fio = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "fio",
            "--name=uring",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--rw=randrw",
            "--bs=4k",
            "--size=2m",
            "--filename=f",
            "--randseed=7",
            "--output=/dev/null",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    for (extra, registered) in [(&[][..], false), (&["--registerfiles=1"][..], true)] {
        for backend in ["ptrace", "ebpf"] {
            let _ = std::fs::remove_file(work.join("f"));
            let argv = fio(extra);
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let trace = record_with(tmp.path(), &work, backend, &argv);
            let text = dump(&trace);
            assert!(
                text.contains("io_uring_enter(") && text.contains("{WRITE, fd="),
                "{backend}: no requests captured"
            );
            assert_eq!(
                text.contains("io_uring_register(") && text.contains("IORING_REGISTER_FILES, ["),
                registered,
                "{backend} {extra:?}: registration"
            );
            let rep = replay_clean(tmp.path(), &trace, &[]);
            assert!(
                !rep.contains("io_uring requests not issued"),
                "{backend} {extra:?}: {rep}"
            );
        }
    }
}

#[test]
fn threads_writing_disjoint_ranges_replay_clean_in_commute_order() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/workloads/mtpwrite.c");
    let exe = compile(tmp.path(), "mtpwrite", &src);
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = work.join("out");
    let trace = record(
        tmp.path(),
        &work,
        &[exe.to_str().unwrap(), out.to_str().unwrap(), "4", "3000"],
    );
    let err = replay_clean(tmp.path(), &trace, &["--order", "commute"]);
    assert!(err.contains("replayed 12"), "{err}");
}

/// A work directory under a fresh temporary directory that user `owner`
/// can use (temporary directories are private to root).
fn shared_work(tmp: &Path, owner: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    require_root("runs a program as another user");
    std::fs::set_permissions(tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
    let work = tmp.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let o = Command::new("chown")
        .arg(owner)
        .arg(&work)
        .output()
        .unwrap();
    assert!(o.status.success(), "chown: {}", show(&o));
    work
}

#[test]
fn a_program_that_drops_to_another_user_replays_with_its_ids() {
    // As `nobody`: files it makes are nobody's, root's private directory
    // refuses it (EACCES), and the Unix socket it binds is a file that
    // chmod, stat and unlink find. Replay once made everything root's
    // and never made the socket file.
    require("setpriv");
    require("python3");
    let tmp = tempfile::tempdir().unwrap();
    let work = shared_work(tmp.path(), "nobody");
    let script = "mkdir d && echo hi > d/f && chmod 600 d/f && ln -s f d/l \
        && { ls /root > /dev/null 2>&1; true; } \
        && python3 -c 'import socket, os; s = socket.socket(socket.AF_UNIX); \
        s.bind(\"sock\"); os.chmod(\"sock\", 0o770); os.stat(\"sock\"); os.unlink(\"sock\")'";
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(work.join("d"));
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &[
                "setpriv",
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "sh",
                "-c",
                script,
            ],
        );
        let text = dump(&trace);
        assert!(
            text.contains("EACCES"),
            "{backend}: ls /root was not refused"
        );
        replay_clean(tmp.path(), &trace, &[]);
        let f = under(&tmp.path().join("root"), &work);
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(f.join("d/f")).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534), "{backend}");
        // Into a private root (as `mktemp -d` makes): it stands for `/`
        // and gets `/`'s mode, or nobody could look up anything in it.
        let private = tmp.path().join("private");
        let _ = std::fs::remove_dir_all(&private);
        std::fs::create_dir(&private).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        replay_clean_at(&private, &trace, &[]);
    }
}

/// A user who is not root records with ptrace and replays as themselves:
/// the replay root's files are all theirs, yet the program must meet the
/// same files and the same refusals. Before, preparing failed outright on
/// a read-only file of the user's own (its contents were written after
/// its mode), every `stat` of a system file mismatched on its owner, root's
/// private directory let the user in (`ENOENT` where the recording had
/// `EACCES`), and the root left behind could not be removed without root.
#[test]
fn a_user_without_root_replays_their_own_recording() {
    use std::os::unix::fs::PermissionsExt;
    require("setpriv");
    let tmp = tempfile::tempdir().unwrap();
    let work = shared_work(tmp.path(), "nobody");
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
    // The test binary may sit under a private directory: nobody runs a copy.
    let rea = tmp.path().join("reanimator");
    std::fs::copy(bin(), &rea).unwrap();
    std::fs::write(work.join("ro"), "read-only\n").unwrap();
    std::os::unix::fs::chown(work.join("ro"), Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(work.join("ro"), std::fs::Permissions::from_mode(0o444)).unwrap();
    // Root's, searchable but not listable by others.
    let unlisted = tmp.path().join("unlisted");
    std::fs::create_dir(&unlisted).unwrap();
    std::fs::write(unlisted.join("f"), "found\n").unwrap();
    std::fs::set_permissions(&unlisted, std::fs::Permissions::from_mode(0o711)).unwrap();
    let as_nobody = [
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
    ];
    let run = |args: &[&str], dir: &Path| {
        let mut cmd = Command::new(as_nobody[0]);
        cmd.args(&as_nobody[1..])
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null());
        let o = output_within(&mut cmd, Duration::from_secs(120));
        assert!(o.status.success(), "{args:?}: {}", show(&o));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let trace = out.join("t.rtr");
    let script = format!(
        "cat ro > copy; stat -c '%U %a' /usr/bin/env /root > st; \
         ls /root > /dev/null 2>&1; PATH=/root/bin:$PATH; env true; \
         cat {u}/f > found; ls {u} > /dev/null 2>&1; true",
        u = unlisted.display()
    );
    let rea = rea.to_str().unwrap();
    let t = trace.to_str().unwrap();
    run(&[rea, "record", "-o", t, "--", "sh", "-c", &script], &work);
    assert_eq!(
        std::fs::read_to_string(work.join("st")).unwrap(),
        "root 755\nroot 700\n"
    );
    let text = dump(&trace);
    assert!(text.contains("EACCES"), "/root did not refuse nobody");
    let root = out.join("root");
    let err = run(&[rea, "replay", t, "--root", root.to_str().unwrap()], &out);
    assert!(
        err.contains(" 0 mismatches") && err.contains(" 0 differ"),
        "{err}"
    );
    assert!(err.contains("owner permission bits"), "{err}");
    // The recorded modes are back once replay is over, so nobody can list
    // and remove all of its root.
    use std::os::unix::fs::MetadataExt;
    let mode = |p: &Path| std::fs::symlink_metadata(under(&root, p)).unwrap().mode() & 0o7777;
    assert_eq!(mode(Path::new("/root")), 0o700);
    assert_eq!(mode(&unlisted), 0o711);
    run(&["rm", "-rf", root.to_str().unwrap()], &out);
}

/// `nobody` may write in `shared` (root's, group 4343, mode 2770) only
/// through supplementary group 4343: gained with `setgroups` in the trace
/// (`setpriv --groups`), or held from the start (the recorder itself runs
/// with it, and the command keeps it). Replay once acted with no
/// supplementary groups and was refused (EACCES, 3 mismatches).
#[test]
fn a_program_using_its_supplementary_groups_replays_with_them() {
    require("setpriv");
    let tmp = tempfile::tempdir().unwrap();
    let work = shared_work(tmp.path(), "nobody");
    let shared = work.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::os::unix::fs::chown(&shared, Some(0), Some(4343)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o2770)).unwrap();
    let as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup"];
    let write = ["sh", "-c", "echo hi > shared/f"];
    for backend in ["ptrace", "ebpf"] {
        for inherited in [false, true] {
            let _ = std::fs::remove_file(shared.join("f"));
            let trace = tmp.path().join("t.rtr");
            let _ = std::fs::remove_file(&trace);
            let mut cmd = Command::new("setpriv");
            cmd.arg(if inherited {
                "--groups=4343"
            } else {
                "--groups=0"
            })
            .arg(bin())
            .args(["record", "--backend", backend, "-o"])
            .arg(&trace)
            .arg("--")
            .args(as_nobody)
            .arg(if inherited {
                "--keep-groups"
            } else {
                "--groups=4343"
            })
            .args(write)
            .current_dir(&work)
            .stdin(Stdio::null());
            let rec = output_within(&mut cmd, Duration::from_secs(120));
            let case = format!("{backend}, inherited groups: {inherited}");
            assert!(rec.status.success(), "{case}: {}", show(&rec));
            let text = dump(&trace);
            let says = if inherited {
                "groups [4343]"
            } else {
                "setgroups(1, [4343]) = 0"
            };
            assert!(text.contains(says), "{case}: the trace lacks `{says}`");
            replay_clean(tmp.path(), &trace, &[]);
            let f = under(&tmp.path().join("root"), &shared).join("f");
            use std::os::unix::fs::MetadataExt;
            let meta = std::fs::metadata(&f).unwrap();
            assert_eq!((meta.uid(), meta.gid()), (65534, 4343), "{case}");
        }
    }
}

#[test]
fn postgres_initdb_start_load_stop() {
    // A database server's whole life as its own user: initdb feeds the
    // bootstrap backend 300 KB through a pipe, the postmaster forks its
    // workers, psql talks to it through a Unix socket. The shell runs the
    // server itself and waits for it through its socket: `pg_ctl -w`
    // polls postmaster.pid while the postmaster rewrites it, a race that
    // replay cannot order (REPLAY.md), and 1 replay in 8 read "stopping"
    // where the recording had read "ready".
    require("runuser");
    let bindir = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .and_then(|d| d.filter_map(Result::ok).map(|e| e.path().join("bin")).find(|b| b.join("initdb").exists()))
        .expect("PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb): run scripts/install-deps.sh");
    require("psql");
    require("pg_isready");
    let tmp = tempfile::tempdir().unwrap();
    let work = shared_work(tmp.path(), "postgres");
    let script = format!(
        "set -e; export PATH={}:$PATH\n\
         initdb -D data -A trust -U pg --no-sync > /dev/null\n\
         postgres -D data -k \"$PWD\" -c listen_addresses='' -c shared_buffers=16MB -c max_connections=10 > log 2>&1 &\n\
         server=$!\n\
         until pg_isready -q -h \"$PWD\"; do sleep 0.1; done\n\
         psql -h $PWD -U pg -d postgres -q -v ON_ERROR_STOP=1 -c \"create table t(id int primary key, v text)\" \
           -c \"insert into t select g, md5(g::text) from generate_series(1, 5000) g\" \
           -c \"update t set v = v || 'x' where id % 3 = 0\" -c \"delete from t where id % 7 = 0\" -c \"checkpoint\"\n\
         kill -INT $server\n\
         wait $server\n",
        bindir.display()
    );
    std::fs::write(work.join("pg.sh"), script).unwrap();
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_dir_all(work.join("data"));
        let _ = std::fs::remove_file(work.join("log"));
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &["runuser", "-u", "postgres", "--", "sh", "pg.sh"],
        );
        assert!(
            work.join("data/PG_VERSION").exists(),
            "{backend}: initdb did not run"
        );
        // Every process of the server writes `log` through the one offset
        // `> log` made; an eBPF recording orders those writes well, a
        // ptrace one not always (REPLAY.md, "Ordering").
        let root = tmp.path().join("root");
        let _ = std::fs::remove_dir_all(&root);
        let log = work.canonicalize().unwrap().join("log");
        replay_clean_but(&root, &trace, &[], |line| {
            backend == "ptrace" && lines_reordered(&root, &log, line)
        });
    }
}

/// postmark's small-file workload: 300 files of 500 B to 20 KB, 2,000
/// transactions that create, delete, read and append, then every file
/// deleted. The final state is an empty directory, so the test also
/// checks in the trace that the work was done: every file it made was
/// written and unlinked.
#[test]
fn postmark_small_file_workload() {
    require("postmark");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let pm = work.join("pm");
    // postmark does not make its location.
    std::fs::create_dir_all(&pm).unwrap();
    std::fs::write(
        work.join("pm.cfg"),
        format!(
            "set location {}\nset number 300\nset transactions 2000\nset size 500 20000\n\
             set seed 42\nrun\nquit\n",
            pm.display()
        ),
    )
    .unwrap();
    for backend in ["ptrace", "ebpf"] {
        let trace = record_with(tmp.path(), &work, backend, &["postmark", "pm.cfg"]);
        let text = dump(&trace);
        let count = |pred: &dyn Fn(&str) -> bool| text.lines().filter(|l| pred(l)).count();
        // postmark writes its files with `open(O_CREAT)`, `write` and
        // `unlink`; it fails no call on a healthy run (it reports a file it
        // cannot open or delete and goes on, exit status 0).
        let created = count(&|l| l.contains("O_WRONLY|O_CREAT|O_TRUNC") && !l.contains(" = -1 "));
        let failed_creates = count(&|l| l.contains("O_CREAT") && l.contains(" = -1 "));
        let unlinked = count(&|l| l.contains(" unlink(") && l.contains(") = 0 <"));
        let unlinks = count(&|l| l.contains(" unlink("));
        let writes = count(&|l| l.contains(" write(") && !l.contains(" write(1, "));
        assert!(
            created >= 600
                && failed_creates == 0
                && unlinked == created
                && unlinks == unlinked
                && writes >= created,
            "{backend}: {created} files created ({failed_creates} failed), {unlinked} of \
             {unlinks} unlinks done, {writes} writes"
        );
        let left = std::fs::read_dir(&pm).unwrap().count();
        assert_eq!(left, 0, "{backend}: postmark left {left} files");
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// A database server's whole life, as postgres's above: `mariadb-install-db`
/// pipes 3 MB of SQL through two `cat`s into a bootstrap server, the
/// server starts, the client makes a database and sysbench loads two tables
/// and runs 300 OLTP read-write transactions in 2 threads over the Unix
/// socket, and the server shuts down. Each replay of it once stood for
/// 15 min (the dispatcher's stalled read-ahead; see `Shared::acquire`).
///
/// It runs as `mysql` through `setpriv`, which becomes the shell, not
/// through `runuser`: under the eBPF recorder a program that outruns the
/// recorder is stopped for a moment (SIGSTOP), and `runuser`, which waits
/// for its child with `WUNTRACED`, then stops itself and never resumes
/// (the recording hung). The server's temporary directory is its own: it
/// lists its tmpdir at start, and `/tmp`, which other tests change while
/// this one records, was listed once by the bootstrap server and again by
/// the server 2 s later, with other entries (a mismatch in replay).
///
/// InnoDB reads and writes its pages through io_uring (MariaDB 10.11 as
/// Debian builds it): the test checks the server said so and the trace
/// holds its requests.
#[test]
fn mariadb_sysbench_oltp() {
    for tool in [
        "setpriv",
        "mariadb-install-db",
        "mariadbd",
        "mariadb-admin",
        "mariadb",
        "sysbench",
    ] {
        require(tool);
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = shared_work(tmp.path(), "mysql");
    let script = String::from(
        "set -e\n\
         opts=\"--tmpdir=$PWD/tmp\"\n\
         mkdir tmp\n\
         mariadb-install-db --no-defaults --datadir=\"$PWD/data\" \
           --auth-root-authentication-method=normal $opts > install.log 2>&1\n\
         mariadbd --no-defaults --datadir=\"$PWD/data\" --socket=\"$PWD/sock\" --skip-networking \
           --log-error=\"$PWD/err.log\" --innodb-buffer-pool-size=32M \
           --innodb-log-file-size=16M $opts &\n\
         server=$!\n\
         # The server must not outlive a failing script: the recording\n\
         # would wait for it.\n\
         trap 'kill -KILL $server 2> /dev/null' EXIT\n\
         client=\"--no-defaults --socket=$PWD/sock -u root\"\n\
         tries=0\n\
         until mariadb-admin $client ping > /dev/null 2>&1; do\n\
           tries=$((tries + 1))\n\
           if [ $tries -ge 300 ]; then echo 'maria.sh: no answer from the server in 30 s' >&2; exit 1; fi\n\
           sleep 0.1\n\
         done\n\
         mariadb $client -e 'create database sbtest'\n\
         sb=\"sysbench oltp_read_write --db-driver=mysql --mysql-socket=$PWD/sock \
           --mysql-user=root --tables=2 --table-size=2000\"\n\
         $sb prepare > sb.log\n\
         $sb --threads=2 --events=300 --time=0 run >> sb.log\n\
         mariadb-admin $client shutdown\n\
         wait $server\n\
         trap - EXIT\n"
    );
    std::fs::write(work.join("maria.sh"), script).unwrap();
    for backend in ["ptrace", "ebpf"] {
        for old in ["data", "tmp"] {
            let _ = std::fs::remove_dir_all(work.join(old));
        }
        for old in ["install.log", "err.log", "sb.log"] {
            let _ = std::fs::remove_file(work.join(old));
        }
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &[
                "setpriv",
                "--reuid=mysql",
                "--regid=mysql",
                "--clear-groups",
                "sh",
                "maria.sh",
            ],
        );
        let log = |name: &str| std::fs::read_to_string(work.join(name)).unwrap_or_default();
        // sysbench's report: "    transactions:    300    (812.70 per sec.)".
        let transactions = log("sb.log").lines().find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("transactions:")).then(|| words.next().map(str::to_owned))?
        });
        assert!(
            work.join("data/sbtest/sbtest1.ibd").exists()
                && transactions.as_deref() == Some("300")
                && log("err.log").contains("mariadbd: Shutdown complete"),
            "{backend}: the workload did not run through\ninstall.log:\n{}\nerr.log:\n{}\nsb.log:\n{}",
            log("install.log"),
            log("err.log"),
            log("sb.log")
        );
        assert!(
            log("err.log").contains("InnoDB: Using io_uring"),
            "{backend}: no io_uring"
        );
        let text = dump(&trace);
        assert!(
            text.contains("io_uring_enter(") && text.contains("{WRITEV, fd="),
            "{backend}: InnoDB's io_uring requests were not captured"
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// Every record of `trace` (without buffer data).
fn records(trace: &Path) -> Vec<reanimator_trace::Record> {
    let mut r =
        reanimator_trace::Reader::open(trace, reanimator_trace::ReadOptions { data: false })
            .expect("open trace");
    std::iter::from_fn(|| r.next_record().expect("read trace")).collect()
}

/// `--timings FILE` writes one call per executed call, with the
/// original's identity and result and the replay's own times, and the
/// processes they belong to; it never overwrites a file unasked, nor the
/// trace being replayed.
#[test]
fn the_timings_trace_holds_every_executed_call_with_replay_times() {
    use reanimator_trace::Record;
    let (tmp, work) = scratch();
    let trace = record_with(
        tmp.path(),
        &work,
        "ptrace",
        &[
            "sh",
            "-c",
            "for i in 1 2 3; do echo $i >> f; done; cat f > g; rm f",
        ],
    );
    let timings = tmp.path().join("t.tim");
    let option = format!("--timings={}", timings.display());
    let report = replay_clean(tmp.path(), &trace, &[&option]);
    let said: u64 = report
        .split("the times of ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of timed calls in: {report}"));

    let original: std::collections::HashMap<u64, reanimator_trace::SyscallEvent> = records(&trace)
        .into_iter()
        .filter_map(|r| match r {
            Record::Syscall(e) => Some((e.seq, e)),
            _ => None,
        })
        .collect();
    let reader =
        reanimator_trace::Reader::open(&timings, reanimator_trace::ReadOptions { data: false })
            .unwrap();
    let meta = reader.meta().clone();
    assert_eq!(meta.recorder, "replay");
    assert_eq!(meta.options["timing"], "afap");
    assert_eq!(meta.options["order"], "overlap");
    assert_eq!(meta.options["replay_of"], trace.display().to_string());
    let origin: u64 = meta.options["replay_origin_ns"].parse().unwrap();
    let trace_origin: u64 = meta.options["trace_origin_ns"].parse().unwrap();
    assert!(original.values().all(|e| e.enter_ns >= trace_origin));
    let (mut calls, mut starts, mut writes) = (0u64, 0, 0);
    for r in records(&timings) {
        match r {
            Record::Syscall(e) => {
                calls += 1;
                let o = &original[&e.seq];
                assert_eq!((o.nr, o.args, o.tid, o.tgid), (e.nr, e.args, e.tid, e.tgid));
                let (x, ox) = (e.exit.unwrap(), o.exit.unwrap());
                assert_eq!((x.ret, x.is_error), (ox.ret, ox.is_error));
                assert!(origin <= e.enter_ns && e.enter_ns <= x.exit_ns, "{e:?}");
                assert!(e.captures.is_empty());
                writes += (e.nr == libc::SYS_write as u32) as u64;
            }
            Record::ProcessStart(p) => {
                starts += 1;
                assert!(p.time_ns >= origin);
            }
            _ => {}
        }
    }
    assert_eq!(calls, said, "{report}");
    assert!(writes >= 3, "the three appends: {writes}");
    assert!(starts >= 2, "sh and cat: {starts}");

    // `fidelity` joins every timed call with its original.
    let fidelity = Command::new(bin())
        .args(["fidelity", "--json"])
        .arg(&trace)
        .arg(&timings)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(fidelity.status.success(), "{}", show(&fidelity));
    let json: serde_json::Value = serde_json::from_slice(&fidelity.stdout).unwrap();
    let returned = original.values().filter(|e| e.exit.is_some()).count() as u64;
    let replay = &json["replays"][0];
    assert_eq!(json["original"]["calls"], returned, "{json}");
    assert_eq!(replay["matched"], calls, "{json}");
    assert_eq!(replay["unmatched"], 0, "{json}");
    assert_eq!(replay["not_replayed"], returned - calls, "{json}");

    // Not overwritten unasked; overwritten with --force; never the trace.
    let again = |extra: &[&str]| {
        let root = tmp.path().join("root");
        let _ = std::fs::remove_dir_all(&root);
        Command::new(bin())
            .args(["replay", "--root"])
            .arg(&root)
            .arg(&trace)
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let refused = again(&[&option]);
    assert!(!refused.status.success());
    assert!(
        show(&refused).contains("already exists"),
        "{}",
        show(&refused)
    );
    assert!(again(&[&option, "--force"]).status.success());
    let onto_trace = format!("--timings={}", trace.display());
    let refused = again(&[&onto_trace, "--force"]);
    assert!(!refused.status.success());
    assert!(
        show(&refused).contains("is the trace being replayed"),
        "{}",
        show(&refused)
    );
    assert!(
        records(&trace).len() > calls as usize,
        "the trace is intact"
    );
}

/// A root program that drops capabilities (see `tests/programs/caps.c`):
/// with `capset` from its effective set, then from its bounding set before
/// an `execve`. Replay acts with the capabilities the program had, so its
/// refused opens are refused again (before, replay as root was allowed:
/// one mismatch each).
#[test]
fn dropped_capabilities_are_dropped_in_replay_too() {
    require_root("drops capabilities root has");
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "caps");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        let report = std::fs::read_to_string(work.join("report")).unwrap();
        assert_eq!(
            report,
            "dropped: Permission denied\ntaken back: opened\nafter exec: Permission denied\n",
            "{backend}"
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// Python's `os.set_inheritable` sets and clears close-on-exec with
/// `ioctl(FIOCLEX)`/`ioctl(FIONCLEX)`, which decides what an `execve`
/// keeps. Replay ignored them (ioctls are simulated): a shell's
/// `echo >&FD` to a descriptor made inheritable failed `EBADF` (the log
/// came out empty), and a pipe's write end made close-on-exec stayed open in
/// the exec'd child, so the parent's read waited 10 s for an end of file.
#[test]
fn close_on_exec_set_by_ioctl_decides_what_an_exec_keeps() {
    common::require("python3");
    let (tmp, work) = scratch();
    let script = "import os\n\
        fd = os.open('log', os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)\n\
        os.set_inheritable(fd, True)\n\
        os.system(f'echo from child >&{fd}')\n\
        r, w = os.pipe2(0)\n\
        os.set_inheritable(w, False)\n\
        pid = os.fork()\n\
        if pid == 0:\n    os.close(r)\n    os.execv('/bin/sleep', ['sleep', '0.3'])\n\
        os.close(w)\n\
        os.write(fd, b'read %r\\n' % os.read(r, 10))\n\
        os.waitpid(pid, 0)\n";
    for backend in ["ptrace", "ebpf"] {
        let trace = record_with(tmp.path(), &work, backend, &["python3", "-c", script]);
        let log = std::fs::read_to_string(work.join("log")).unwrap();
        assert_eq!(log, "from child\nread b''\n", "{backend}");
        let err = replay_clean(tmp.path(), &trace, &[]);
        assert!(!err.contains("stayed empty"), "{backend}: {err}");
    }
}

/// `unshare(CLONE_FS)` and `unshare(CLONE_FILES)` in a thread (see
/// `tests/programs/unshare.c`): the thread's `chdir`, `umask` and `close`
/// are its own. Replay simulated `unshare`, so the main thread made its
/// file in the other thread's directory with its umask, and its log
/// descriptor was closed (3 mismatches, 2 paths differing).
#[test]
fn a_thread_that_unshares_keeps_its_changes_to_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "unshare");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        assert_eq!(
            std::fs::read_to_string(work.join("log")).unwrap(),
            "still open\n",
            "{backend}"
        );
        replay_clean(tmp.path(), &trace, &[]);
        let root = tmp.path().join("root");
        let replayed = under(&root, &work);
        assert!(replayed.join("in_top").exists(), "{backend}");
        assert!(!replayed.join("sub/in_top").exists(), "{backend}");
    }
}

/// A Unix socket file there before the trace (its server gone), then
/// `stat` and `rm` of it, as Go's `os.Remove(sock); net.Listen(...)`
/// does: preparation left it out, so the `stat` failed `ENOENT` and the
/// final state said it was absent. Both back ends.
#[test]
fn a_socket_file_there_before_the_trace_is_prepared() {
    let std_listener = |path: &Path| std::os::unix::net::UnixListener::bind(path).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        drop(std_listener(&work.join("s.sock")));
        drop(std_listener(&work.join("kept.sock")));
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &["sh", "-c", "stat -c %F s.sock kept.sock > kinds; rm s.sock"],
        );
        assert_eq!(
            std::fs::read_to_string(work.join("kinds")).unwrap(),
            "socket\nsocket\n",
            "{backend}"
        );
        let err = replay_clean(tmp.path(), &trace, &[]);
        assert!(!err.contains("not created"), "{backend}: {err}");
        let kept = under(&tmp.path().join("root"), &work).join("kept.sock");
        assert!(
            std::os::unix::fs::FileTypeExt::is_socket(
                &std::fs::symlink_metadata(kept).unwrap().file_type()
            ),
            "{backend}"
        );
    }
}

/// `splice` from an inherited pipe (stdin, fed from outside the trace)
/// into a file: the bytes never pass through the program's memory, so no
/// trace holds them, and the file comes out empty in replay. Replay says
/// so, with the count, instead of leaving only the final-state line to
/// explain it (before: 0 mismatches and the file differing, unexplained).
#[test]
fn bytes_spliced_from_outside_the_trace_are_counted() {
    use std::io::Write;
    require("python3");
    let (tmp, work) = scratch();
    let trace = tmp.path().join("t.rtr");
    let (reader, mut writer) = std::io::pipe().unwrap();
    let feeder = std::thread::spawn(move || {
        for i in 0..20_000 {
            writeln!(writer, "{i}").unwrap();
        }
    });
    let script = "import os\n\
        f = os.open('out', os.O_WRONLY | os.O_CREAT, 0o644)\n\
        while os.splice(0, f, 65536):\n    pass\n";
    let rec = output_within(
        Command::new(bin())
            .current_dir(&work)
            .args(["record", "-o"])
            .arg(&trace)
            .args(["--", "python3", "-c", script])
            .stdin(reader),
        Duration::from_secs(300),
    );
    feeder.join().unwrap();
    assert!(rec.status.success(), "record: {}", show(&rec));
    let size = std::fs::metadata(work.join("out")).unwrap().len();
    assert_eq!(size, 108_890);
    let err = replay_stderr(&trace, &tmp.path().join("root"));
    assert!(
        err.contains(&format!(
            "moved {size} bytes inside the kernel from a socket or an inherited descriptor"
        )) && err.contains(" 0 mismatches")
            && err.contains("out: size 0, expected 108890"),
        "{err}"
    );
}

/// Paths looked up below a file that was there before the trace (`stat
/// f/x`, as pytest looks for `pyvenv.cfg` under every entry it meets):
/// recorded absent, which they are, but preparing the root failed on them
/// ("Not a directory") and nothing replayed. And the file, recorded
/// without contents on the way to `f/x`, never got them when `cat f` read
/// it: replay made it empty. Both back ends.
#[test]
fn paths_below_a_file_are_absent_already() {
    let tmp = tempfile::tempdir().unwrap();
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        std::fs::write(work.join("f"), "hi\n").unwrap();
        let _ = std::fs::remove_file(work.join("lf"));
        std::os::unix::fs::symlink("f", work.join("lf")).unwrap();
        let trace = record_with(
            tmp.path(),
            &work,
            backend,
            &["sh", "-c", "stat f/x; stat lf/x/y; cat f > out 2>&1"],
        );
        assert_eq!(std::fs::read_to_string(work.join("out")).unwrap(), "hi\n");
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// A directory's extended attributes, there before the trace (`tar
/// --xattrs` and `cp -a` of a tree carry them): preparation set them on
/// regular files only, so the directory's `listxattr` found none and the
/// final state differed.
#[test]
fn a_directorys_extended_attributes_are_prepared() {
    require("python3");
    let (tmp, work) = scratch();
    std::fs::create_dir(work.join("sub")).unwrap();
    let set = Command::new("python3")
        .current_dir(&work)
        .args(["-c", "import os; os.setxattr('sub', 'user.d', b'hello')"])
        .status()
        .unwrap();
    assert!(set.success(), "user xattrs on the test's file system");
    let trace = record(
        tmp.path(),
        &work,
        &[
            "python3",
            "-c",
            "import os; open('seen', 'w').write(repr((os.listxattr('sub'), os.getxattr('sub', 'user.d'))))",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(work.join("seen")).unwrap(),
        "(['user.d'], b'hello')"
    );
    replay_clean(tmp.path(), &trace, &[]);
}

/// A shared file mapping resized with `mremap` (Python's `mmap.resize`),
/// stored to before and after, then unmapped: replay simulated the
/// `mremap` and kept its mapping under the old address, so the `munmap`
/// at the new one found none and its captured stores were dropped
/// silently (a mismatch at the read back, the file differing). Both back
/// ends.
#[test]
fn stores_through_a_resized_mapping_replay() {
    require("python3");
    let script = r#"
import mmap
with open("m.bin", "wb") as f:
    f.write(b"\0" * 8192)
with open("m.bin", "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[5000:5005] = b"world"
    m.resize(16384)
    m[16000:16004] = b"END!"
    m.close()
with open("m.bin", "rb") as f, open("seen", "w") as out:
    d = f.read()
    out.write(repr((d[5000:5005], d[16000:16004])))
"#;
    let tmp = tempfile::tempdir().unwrap();
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &["python3", "-c", script]);
        assert_eq!(
            std::fs::read_to_string(work.join("seen")).unwrap(),
            "(b'world', b'END!')",
            "{backend}"
        );
        replay_clean(tmp.path(), &trace, &[]);
        same_files(
            &under(&tmp.path().join("root"), &work),
            &work,
            &["m.bin", "seen"],
            backend,
        );
    }
}

/// In a directory with a default POSIX ACL the kernel ignores the umask
/// (the ACL's mask applies): replay applied the process's umask itself,
/// so files and directories made there came out `0600`/`0700` where they
/// were `0664`/`0775`. One directory had its default ACL before the
/// trace (prepared), the other gets it during the trace (`setxattr`).
#[test]
fn a_default_acl_directory_ignores_the_umask_in_replay() {
    require("python3");
    // user::rwx, group::rwx, mask::rwx, other::r-x (the xattr's binary
    // form: version 2, then tag, permissions and id of each entry).
    let acl = r#"
import os, struct
def default_acl(path):
    entries = [(0x01, 7), (0x04, 7), (0x10, 7), (0x20, 5)]
    blob = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, 0xFFFFFFFF) for t, p in entries)
    os.setxattr(path, "system.posix_acl_default", blob)
"#;
    let before = format!("{acl}\nos.mkdir(\"pre\")\ndefault_acl(\"pre\")\n");
    let during = format!(
        "{acl}
os.umask(0o077)
os.mkdir(\"late\")
default_acl(\"late\")
modes = []
for d in (\"pre\", \"late\"):
    fd = os.open(d + \"/file\", os.O_CREAT | os.O_WRONLY, 0o666)
    os.close(fd)
    os.mkdir(d + \"/dir\", 0o777)
    modes += [oct(os.stat(d + \"/file\").st_mode & 0o777), oct(os.stat(d + \"/dir\").st_mode & 0o777)]
open(\"plain\", \"w\").close()
modes.append(oct(os.stat(\"plain\").st_mode & 0o777))
open(\"seen\", \"w\").write(repr(modes))
"
    );
    let tmp = tempfile::tempdir().unwrap();
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let set_up = Command::new("python3")
            .args(["-c", &before])
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(set_up.status.success(), "{}", show(&set_up));
        let trace = record_with(tmp.path(), &work, backend, &["python3", "-c", &during]);
        assert_eq!(
            std::fs::read_to_string(work.join("seen")).unwrap(),
            "['0o664', '0o775', '0o664', '0o775', '0o600']",
            "{backend}"
        );
        replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work);
        for name in ["pre/file", "pre/dir", "late/file", "late/dir", "plain"] {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| {
                std::fs::metadata(p.join(name))
                    .unwrap()
                    .permissions()
                    .mode()
            };
            assert_eq!(mode(&replayed), mode(&work), "{backend}: {name}");
        }
    }
}

/// An open of `/proc/self/fd/N` reaches the file descriptor N holds even
/// when no name does: removed while open, or made with `O_TMPFILE`.
/// Replay opened the path N was opened with: `ENOENT` for the removed
/// file, and the directory itself for the `O_TMPFILE` one (its reads
/// failed with `EISDIR`).
#[test]
fn reopening_a_nameless_file_through_proc_self_fd_reaches_it() {
    require("python3");
    let script = r#"
import os
fd = os.open("f", os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"gone but open\n")
os.unlink("f")
g = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
gone = os.read(g, 100)
t = os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600)
os.write(t, b"tmpfile-data\n")
u = os.open(f"/proc/self/fd/{t}", os.O_RDWR)
tmp = os.read(u, 100)
os.write(u, b"more\n")
with open("seen", "w") as out:
    out.write(repr((gone, tmp, os.fstat(t).st_size)))
"#;
    let tmp = tempfile::tempdir().unwrap();
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &["python3", "-c", script]);
        assert_eq!(
            std::fs::read_to_string(work.join("seen")).unwrap(),
            "(b'gone but open\\n', b'tmpfile-data\\n', 18)",
            "{backend}"
        );
        replay_clean(tmp.path(), &trace, &[]);
        same_files(
            &under(&tmp.path().join("root"), &work),
            &work,
            &["seen"],
            backend,
        );
    }
}

/// `open` and `openat` drop flag bits no flag uses (GNU dd passes its
/// own `skip_bytes`, `count_bytes` and `seek_bytes` markers there) and,
/// with `O_PATH`, the flags `O_PATH` ignores; replay opens through
/// `openat2`, which refuses both with `EINVAL`, so dd's output went to its
/// stdout file in replay and a Perl `sysopen(O_PATH|O_RDWR)` failed.
#[test]
fn open_flags_the_kernel_ignores_are_ignored_in_replay() {
    require("dd");
    require("python3");
    let script = "printf 0123456789abcdefghij > in\n\
                  printf ABCDEFGHIJKLMNOPQRST > out\n\
                  dd if=in of=out iflag=skip_bytes,count_bytes skip=3 count=7 \
                     oflag=seek_bytes seek=5 conv=notrunc status=none\n\
                  python3 -c 'import os; fd = os.open(\"in\", os.O_PATH | os.O_RDWR | os.O_TRUNC); \
                  print(os.stat(fd).st_size, file=open(\"seen\", \"w\"))'\n";
    let tmp = tempfile::tempdir().unwrap();
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &["sh", "-c", script]);
        assert_eq!(
            std::fs::read_to_string(work.join("out")).unwrap(),
            "ABCDE3456789MNOPQRST",
            "{backend}"
        );
        assert_eq!(std::fs::read_to_string(work.join("seen")).unwrap(), "20\n");
        replay_clean(tmp.path(), &trace, &[]);
        same_files(
            &under(&tmp.path().join("root"), &work),
            &work,
            &["in", "out", "seen"],
            backend,
        );
    }
}

/// Stores through a shared mapping before `madvise`: `MADV_DONTNEED`
/// drops the pages from the process (the page map no longer shows them,
/// so the capture at `munmap` skipped them) but the stores stay in the
/// file; `MADV_REMOVE` frees the file's blocks (replay ignored madvise and
/// kept them). Both recorders now capture the range at madvise as at
/// munmap, and replay gives the advice to its re-created mapping.
#[test]
fn stores_before_madvise_replay_and_madv_remove_frees_the_range() {
    require("python3");
    let script = r#"
import mmap
with open("m.bin", "wb") as f:
    f.write(b"w" * 12288)
with open("m.bin", "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:5] = b"kept!"
    m.madvise(mmap.MADV_DONTNEED, 0, 4096)
    m[8192:8193] = b"x"
    try:
        m.madvise(mmap.MADV_REMOVE, 4096, 4096)
    except OSError:
        pass
    m.close()
with open("m.bin", "rb") as f, open("seen", "w") as out:
    d = f.read()
    out.write(repr((d[0:6], d[4096:4097], d[8192:8194])))
"#;
    let tmp = tempfile::tempdir().unwrap();
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &["python3", "-c", script]);
        let seen = std::fs::read_to_string(work.join("seen")).unwrap();
        assert!(seen.starts_with("(b'kept!w', b'"), "{backend}: {seen}");
        replay_clean(tmp.path(), &trace, &[]);
        same_files(
            &under(&tmp.path().join("root"), &work),
            &work,
            &["m.bin", "seen"],
            backend,
        );
    }
}

/// Reads of more than 64 MiB at once (Node's `readFileSync` of a large
/// file): replay gave the kernel the recorded count but a buffer cut to
/// 64 MiB, so `read` and `pread64` wrote past it (heap corruption: replay
/// aborted); and cut a `readv` or `preadv` element to 64 MiB, a short
/// read and a mismatch.
#[test]
fn reads_larger_than_64_mib_replay_whole() {
    require("python3");
    let (tmp, work) = scratch();
    let big: Vec<u8> = (0..(65u32 << 20) + 4097)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(work.join("big"), &big).unwrap();
    let script = r#"
import hashlib, os
fd = os.open("big", os.O_RDONLY)
a = os.read(fd, 70 << 20)
b = os.pread(fd, 70 << 20, 1)
x, y = bytearray(66 << 20), bytearray(8 << 20)
os.lseek(fd, 0, 0)
n = os.readv(fd, [x, y])
m = os.preadv(fd, [bytearray(1 << 20), bytearray(69 << 20)], 0)
with open("sums", "w") as out:
    for d in (a, b, bytes(x) + bytes(y[:n - len(x)])):
        out.write(hashlib.sha256(d).hexdigest() + "\n")
    out.write(f"{len(a)} {len(b)} {n} {m}\n")
"#;
    let trace = record(tmp.path(), &work, &["python3", "-c", script]);
    let sums = std::fs::read_to_string(work.join("sums")).unwrap();
    let size = big.len();
    assert!(
        sums.ends_with(&format!("{size} {} {size} {size}\n", size - 1)),
        "{sums}"
    );
    replay_clean(tmp.path(), &trace, &[]);
    same_files(
        &under(&tmp.path().join("root"), &work),
        &work,
        &["sums"],
        "replay",
    );
}

/// A child writing and reading through its parent's descriptors by their
/// `/proc/PID/fd/N` names. Replay took another process's `/proc/PID/fd`
/// for the host's, a pseudo file, and simulated the calls: 0 mismatches,
/// but the log came out 6 bytes short and the copy empty.
#[test]
fn another_processs_proc_fd_names_reach_its_files() {
    let (tmp, work) = scratch();
    std::fs::write(work.join("src"), "hello\n").unwrap();
    let script = "exec 3>>log 4<src; echo first >&3; \
        sh -c \"echo child >> /proc/$$/fd/3; cat /proc/$$/fd/4 > copy\"; echo parent >&3";
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_file(work.join("log"));
        let trace = record_with(tmp.path(), &work, backend, &["bash", "-c", script]);
        assert_eq!(
            std::fs::read_to_string(work.join("log")).unwrap(),
            "first\nchild\nparent\n",
            "{backend}"
        );
        replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work);
        same_files(&replayed, &work, &["log", "copy"], backend);
    }
}

/// Descriptors of every kind made with and without close-on-exec, then
/// an `execve` (see `tests/programs/cloexec.c`): replay keeps exactly
/// what the exec kept. Before, a `memfd_create(MFD_CLOEXEC)` descriptor
/// (executed calls' new descriptors were taken as inheritable) and a
/// pidfd (always close-on-exec) were kept: 2 mismatches. And an
/// `mq_open` descriptor, which the kernel makes close-on-exec whatever
/// its flags, was kept when made without `O_CLOEXEC`: 1 more, seen only
/// where the tests inherit no descriptor of their own (CI).
#[test]
fn an_exec_keeps_exactly_the_descriptors_it_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "cloexec");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        let report = std::fs::read_to_string(work.join("report")).unwrap();
        // 12 kept by the program itself (every kind but the queue and the
        // pidfd) and 35 and 37; descriptors the tests inherited show too,
        // all without the flag.
        let open: Vec<&str> = report.lines().collect();
        assert!(
            open.iter().all(|l| l.ends_with("flags 0"))
                && open.contains(&"35 open, flags 0")
                && open.contains(&"37 open, flags 0")
                && open.len() >= 14,
            "{backend}: {report}"
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// Descriptors of `landlock_create_ruleset` and `open_tree` (see
/// `tests/programs/mount_api_fds.c`): both were recorded as raw words, so
/// replay knew no descriptor there and their `fcntl`, `dup` and `close`
/// failed `EBADF` (4 mismatches); and the ABI version the same Landlock
/// call returns is a number, not a descriptor.
#[test]
fn landlock_and_open_tree_descriptors_are_known_to_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "mount_api_fds");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        let report = std::fs::read_to_string(work.join("report")).unwrap();
        // The untraced tree descriptor is the one the exec kept; the
        // test's own inherited descriptors show too.
        assert!(
            report.starts_with("abi 1, flags 1 0 1, copy 1\n")
                && report.lines().filter(|l| l.ends_with("flags 0")).count() >= 1,
            "{backend}: {report}"
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// A pidfd `clone3` made (see `tests/programs/clone3_pidfd.c`): the
/// kernel stores it inside `struct clone_args`, which no recorder reads,
/// and replay knew no descriptor there: its `waitid`, `dup` and `close`
/// failed `EBADF` (3 mismatches). Replay now takes the lowest free number,
/// as the kernel does.
#[test]
fn a_pidfd_clone3_made_is_known_to_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "clone3_pidfd");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        assert_eq!(
            std::fs::read_to_string(work.join("out")).unwrap(),
            "status 7, dup ok\n",
            "{backend}"
        );
        replay_clean(tmp.path(), &trace, &[]);
    }
}

/// A descriptor taken from another process with `pidfd_getfd` (see
/// `tests/programs/getfd.c`): replay simulated the call, so the write
/// through it was missing from the file, with 0 mismatches. It now takes
/// the entry the pidfd's process holds, while that process is replayed.
#[test]
fn a_descriptor_taken_with_pidfd_getfd_reaches_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = program(tmp.path(), "getfd");
    for backend in ["ptrace", "ebpf"] {
        let work = work_for(tmp.path(), backend);
        let trace = record_with(tmp.path(), &work, backend, &[exe.to_str().unwrap()]);
        replay_clean(tmp.path(), &trace, &[]);
        let replayed = under(&tmp.path().join("root"), &work);
        same_files(&replayed, &work, &["fromchild"], backend);
    }
}
