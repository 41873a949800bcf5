//! File-system state end to end: what the recorders' snapshotter captures
//! from a real tree, the preparer recreates in an empty root, identical by
//! the manifest's own comparison; and confinement of hostile paths.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use reanimator_fsstate::{
    compare, path_state, Need, Owners, Preparer, Root, SnapshotPolicy, Snapshotter,
};
use reanimator_trace::{ContentNote, FileKind, PathPhase, Record};

/// Snapshots `paths` (absolute) as a recorder would at their first touch.
fn snapshot(policy: SnapshotPolicy, paths: &[&Path]) -> (Snapshotter, Vec<Record>) {
    let mut snap = Snapshotter::new(policy).unwrap();
    let mut records = Vec::new();
    touch(&mut snap, &mut records, paths, Need::Contents);
    (snap, records)
}

/// Touches `paths` with `need`, appending the records to `records`.
fn touch(snap: &mut Snapshotter, records: &mut Vec<Record>, paths: &[&Path], need: Need) {
    let mut seq = records.len() as u64;
    for p in paths {
        snap.touch(
            p.as_os_str().as_bytes(),
            need,
            &mut || {
                seq += 1;
                seq
            },
            0,
            &mut |r| records.push(r),
        );
    }
}

/// A fresh root with `records` applied, as replay prepares it.
fn prepared(records: &[Record]) -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::open(dir.path()).unwrap();
    let mut prep = Preparer::new(&root, false);
    for r in records {
        prep.apply(r).unwrap();
    }
    prep.finish().unwrap();
    (dir, root)
}

fn states(records: &[Record]) -> Vec<&reanimator_trace::PathState> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::PathState(s) => Some(s),
            _ => None,
        })
        .collect()
}

#[test]
fn a_snapshot_prepared_into_an_empty_root_matches_the_original() {
    let src = tempfile::tempdir().unwrap();
    let base = src.path();
    std::fs::create_dir(base.join("d")).unwrap();
    std::fs::set_permissions(base.join("d"), std::fs::Permissions::from_mode(0o750)).unwrap();
    // More than one 1 MiB path-data piece, and not a repeating pattern.
    let big: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(base.join("d/big"), &big).unwrap();
    std::fs::set_permissions(base.join("d/big"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::write(base.join("small"), b"hello").unwrap();
    symlink("d/big", base.join("link")).unwrap();
    let touched = [
        base.join("link"),
        base.join("small"),
        base.join("missing/below/x"),
    ];
    let refs: Vec<&Path> = touched.iter().map(|p| p.as_path()).collect();
    let (snap, records) = snapshot(SnapshotPolicy::Contents, &refs);

    // The link was followed: the link itself, and the file it names.
    let st = states(&records);
    let find = |p: &Path| {
        st.iter()
            .find(|s| s.path == p.as_os_str().as_bytes())
            .unwrap_or_else(|| panic!("{} not snapshotted", p.display()))
    };
    assert_eq!(find(&base.join("link")).kind, FileKind::Symlink);
    assert_eq!(find(&base.join("link")).target, b"d/big");
    let b = find(&base.join("d/big"));
    assert_eq!(
        (b.kind, b.size, b.mode & 0o7777),
        (FileKind::Regular, 3_000_000, 0o640)
    );
    assert_eq!(b.content, ContentNote::Complete);
    // Nothing below a component that did not exist.
    assert_eq!(find(&base.join("missing")).kind, FileKind::Absent);
    assert!(!st.iter().any(|s| s
        .path
        .starts_with(base.join("missing/below").as_os_str().as_bytes())));
    let pieces = records
        .iter()
        .filter(|r| matches!(r, Record::PathData(d) if d.path == base.join("d/big").as_os_str().as_bytes()))
        .count();
    assert!(pieces >= 3, "3 MB in {pieces} pieces");

    // tempdir() is private (0700); the root stands for `/` and gets its
    // mode, recorded at the first touch.
    let dir = tempfile::tempdir().unwrap();
    let slash = states(&records)
        .into_iter()
        .find(|s| s.path == b"/")
        .expect("`/` is recorded");
    assert_eq!(slash.kind, FileKind::Directory);
    let root = Root::open(dir.path()).unwrap();
    let mut prep = Preparer::new(&root, false);
    for r in &records {
        prep.apply(r).unwrap();
    }
    let report = prep.finish().unwrap();
    assert!(report.bytes >= 3_000_005, "{report:?}");
    assert_eq!(
        std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o7777,
        slash.mode & 0o7777
    );

    // The manifest's own comparison finds no difference for any touched
    // path (and its ancestors' contents are byte for byte the same).
    let host = Root::host().unwrap();
    for p in snap.touched() {
        let want = path_state(&host, p, PathPhase::After).unwrap();
        let got = path_state(&root, p, PathPhase::After).unwrap();
        assert_eq!(
            compare(&want, &got, &Owners::All),
            Vec::<String>::new(),
            "{}",
            String::from_utf8_lossy(p)
        );
    }
    let inside = dir.path().join(base.strip_prefix("/").unwrap());
    assert_eq!(std::fs::read(inside.join("d/big")).unwrap(), big);
    assert_eq!(
        std::fs::read_link(inside.join("link")).unwrap(),
        Path::new("d/big")
    );
    assert!(!inside.join("missing").exists());
}

#[test]
fn metadata_only_snapshots_record_no_contents() {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("f"), b"secret").unwrap();
    let f = src.path().join("f");
    let (_, records) = snapshot(SnapshotPolicy::Metadata, &[&f]);
    assert!(!records.iter().any(|r| matches!(r, Record::PathData(_))));
    let st = states(&records);
    let s = st
        .iter()
        .find(|s| s.path == f.as_os_str().as_bytes())
        .unwrap();
    assert_eq!((s.kind, s.size), (FileKind::Regular, 6));
    assert_eq!(s.content, ContentNote::Skipped);
}

/// A directory the trace opens for reading is listed in replay as it was:
/// its entries get before-states (files without contents until the trace
/// names them), and what the trace itself made is left out.
#[test]
fn a_directory_opened_for_reading_keeps_its_entries() {
    let src = tempfile::tempdir().unwrap();
    let d = src.path().join("d");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("f"), b"contents").unwrap();
    symlink("f", d.join("l")).unwrap();
    let mut snap = Snapshotter::new(SnapshotPolicy::Contents).unwrap();
    let mut records = Vec::new();
    // The trace creates `made` (absent when named), then lists `d`, then
    // reads `f`.
    touch(&mut snap, &mut records, &[&d.join("made")], Need::Contents);
    std::fs::write(d.join("made"), b"new").unwrap();
    touch(&mut snap, &mut records, &[&d], Need::Entries);
    let listed = states(&records).len();
    touch(&mut snap, &mut records, &[&d], Need::Entries);
    assert_eq!(states(&records).len(), listed, "listed once");
    touch(&mut snap, &mut records, &[&d.join("f")], Need::Contents);

    let st = states(&records);
    let of = |name: &str| -> Vec<_> {
        let p = d.join(name);
        st.iter()
            .filter(|s| s.path == p.as_os_str().as_bytes())
            .map(|s| (s.kind, s.content))
            .collect()
    };
    assert_eq!(of("made"), [(FileKind::Absent, ContentNote::None)]);
    assert_eq!(of("sub"), [(FileKind::Directory, ContentNote::None)]);
    assert_eq!(of("l"), [(FileKind::Symlink, ContentNote::None)]);
    assert_eq!(
        of("f"),
        [
            (FileKind::Regular, ContentNote::Skipped),
            (FileKind::Regular, ContentNote::Complete)
        ]
    );
    assert!(
        !snap.touched().any(|p| p.ends_with(b"/sub")),
        "not in the manifest"
    );

    let (dir, _root) = prepared(&records);
    let inside = dir.path().join(d.strip_prefix("/").unwrap());
    let mut names: Vec<_> = std::fs::read_dir(&inside)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["f", "l", "sub"]);
    assert_eq!(std::fs::read(inside.join("f")).unwrap(), b"contents");
}

/// A directory reached by climbing back (`d/sub/..`, as `ls ..` names
/// it) or `/` itself is listed as well: no step along the path ends at
/// it, and once neither was (`ls /` replayed with most of `/` missing).
#[test]
fn a_directory_reached_by_dot_dot_or_the_root_keeps_its_entries() {
    let src = tempfile::tempdir().unwrap();
    let d = src.path().join("d");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("f"), b"contents").unwrap();
    let mut snap = Snapshotter::new(SnapshotPolicy::Contents).unwrap();
    let mut records = Vec::new();
    touch(&mut snap, &mut records, &[&d.join("sub/..")], Need::Entries);
    let has = |records: &[Record], p: &Path| {
        states(records)
            .iter()
            .any(|s| s.path == p.as_os_str().as_bytes())
    };
    assert!(has(&records, &d.join("f")), "d listed through sub/..");

    touch(&mut snap, &mut records, &[Path::new("/")], Need::Entries);
    for entry in std::fs::read_dir("/").unwrap() {
        let p = entry.unwrap().path();
        assert!(has(&records, &p), "{} listed", p.display());
    }
}

#[test]
fn hostile_paths_resolve_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::open(dir.path()).unwrap();
    std::fs::create_dir(dir.path().join("etc")).unwrap();
    std::fs::write(dir.path().join("etc/passwd"), b"inside").unwrap();
    symlink("/", dir.path().join("escape")).unwrap();
    symlink("../../../../etc", dir.path().join("up")).unwrap();
    let read = |p: &[u8]| {
        let fd = root.open_at(p, libc::O_RDONLY, 0).unwrap();
        std::fs::read(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&fd)
        ))
        .unwrap()
    };
    for p in [
        &b"/../../etc/passwd"[..],
        b"/escape/etc/passwd",
        b"/escape/../../etc/passwd",
        b"/up/passwd",
    ] {
        assert_eq!(read(p), b"inside", "{}", String::from_utf8_lossy(p));
    }
    // The parent of a path is inside too, and `..` is never a final name.
    assert!(root.parent(b"/etc/..").is_err());
    let (parent, name) = root.parent(b"/escape/etc/passwd").unwrap();
    assert_eq!(name.as_bytes(), b"passwd");
    drop(parent);
    // Magic links of /proc are refused, not followed out of the root.
    std::fs::create_dir(dir.path().join("proc")).unwrap();
    symlink("/proc/self/root", dir.path().join("proc/self")).unwrap();
    assert!(root
        .open_at(b"/proc/self/etc/hostname", libc::O_RDONLY, 0)
        .is_err());
}

/// The after-state sum of a file several pieces long (summed on every CPU
/// at once) is the documented formula: xxh3-128 over the little-endian
/// xxh3-128s of its 4 MiB pieces, the last one short.
#[test]
fn after_states_sum_files_piece_by_piece() {
    use reanimator_trace::{ContentHash, HASH_PIECE};
    let dir = tempfile::tempdir().expect("temporary directory");
    let len = 3 * HASH_PIECE as usize + 12345;
    let data: Vec<u8> = (0..len).map(|i| (i * 31 + i / 7919) as u8).collect();
    std::fs::write(dir.path().join("big"), &data).expect("file written");
    std::fs::write(dir.path().join("empty"), b"").expect("file written");
    let root = Root::open(dir.path()).expect("root opens");

    let mut sums = Vec::new();
    for piece in data.chunks(HASH_PIECE as usize) {
        sums.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(piece).to_le_bytes());
    }
    let want = ContentHash::Pieces(xxhash_rust::xxh3::xxh3_128(&sums));
    let got = path_state(&root, b"/big", PathPhase::After).expect("state");
    assert_eq!(got.hash, Some(want));
    assert_eq!(got.size, len as u64);

    // An empty file is one empty piece.
    let empty = path_state(&root, b"/empty", PathPhase::After).expect("state");
    let one = xxhash_rust::xxh3::xxh3_128(b"").to_le_bytes();
    assert_eq!(
        empty.hash,
        Some(ContentHash::Pieces(xxhash_rust::xxh3::xxh3_128(&one)))
    );
    // Compared with a 1.1 manifest, the contents are summed whole.
    let like_old =
        reanimator_fsstate::after_state_like(&root, b"/big", Some(ContentHash::Whole(0)))
            .expect("state");
    assert_eq!(
        like_old.hash,
        Some(ContentHash::Whole(xxhash_rust::xxh3::xxh3_128(&data)))
    );
}

#[test]
fn a_path_that_climbs_out_of_a_directory_the_trace_made_records_what_it_reaches() {
    // git init r; cd r; cp ../f . — "r" was absent when first touched, so
    // nothing under it is recorded, but "r/../f" is the pre-existing f.
    let src = tempfile::tempdir().unwrap();
    let base = src.path();
    std::fs::write(base.join("f"), b"pre-existing").unwrap();
    let mut snap = Snapshotter::new(SnapshotPolicy::Contents).unwrap();
    let mut records = Vec::new();
    touch(&mut snap, &mut records, &[&base.join("r")], Need::Metadata);
    std::fs::create_dir(base.join("r")).unwrap();
    touch(
        &mut snap,
        &mut records,
        &[&base.join("r/x/../../f"), &base.join("r/new")],
        Need::Contents,
    );
    let named: Vec<&[u8]> = states(&records).iter().map(|s| &s.path[..]).collect();
    let f = base.join("f");
    assert!(named.contains(&f.as_os_str().as_bytes()), "{named:?}");
    assert!(!named.iter().any(|p| p.ends_with(b"/r/new")), "{named:?}");
}

/// Emits `snap`'s manifest.
fn manifest(snap: &Snapshotter) -> Vec<reanimator_trace::PathState> {
    let mut seq = 0;
    let mut out = Vec::new();
    snap.manifest(
        &mut || {
            seq += 1;
            seq
        },
        0,
        &mut |r| {
            if let Record::PathState(s) = r {
                out.push(s)
            }
        },
    );
    out
}

/// `du`, `find` and `ls -l` only ask what files are: their contents are
/// recorded by the first call that may look at them, and the manifest does
/// not sum the contents of a file nothing but queries named.
#[test]
fn files_only_queried_are_recorded_without_contents_until_a_call_needs_them() {
    let src = tempfile::tempdir().unwrap();
    let base = src.path();
    for f in ["stat_only", "then_read", "then_truncated"] {
        std::fs::write(base.join(f), format!("contents of {f}")).unwrap();
    }
    symlink("then_read", base.join("link")).unwrap();
    let mut snap = Snapshotter::new(SnapshotPolicy::Contents).unwrap();
    let mut records = Vec::new();
    let all = ["stat_only", "then_read", "then_truncated", "link"].map(|f| base.join(f));
    touch(
        &mut snap,
        &mut records,
        &all.each_ref().map(|p| p.as_path()),
        Need::Query,
    );
    touch(
        &mut snap,
        &mut records,
        &all.each_ref().map(|p| p.as_path()),
        Need::Query,
    );
    assert!(
        !records.iter().any(|r| matches!(r, Record::PathData(_))),
        "queries record no contents"
    );
    // A read through the link records the file's contents then; a
    // truncating open needs none.
    touch(
        &mut snap,
        &mut records,
        &[&base.join("link")],
        Need::Entries,
    );
    touch(
        &mut snap,
        &mut records,
        &[&base.join("then_truncated")],
        Need::Metadata,
    );
    std::fs::write(base.join("then_truncated"), b"new").unwrap();

    let st = states(&records);
    let of = |name: &str| -> Vec<_> {
        let p = base.join(name);
        st.iter()
            .filter(|s| s.path == p.as_os_str().as_bytes())
            .map(|s| s.content)
            .collect()
    };
    assert_eq!(of("stat_only"), [ContentNote::Skipped]);
    assert_eq!(
        of("then_read"),
        [ContentNote::Skipped, ContentNote::Complete]
    );
    assert_eq!(of("then_truncated"), [ContentNote::Skipped]);
    let data: Vec<&[u8]> = records
        .iter()
        .filter_map(|r| match r {
            Record::PathData(d) => d.data.data.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(data, [&b"contents of then_read"[..]]);

    let sums: Vec<_> = manifest(&snap)
        .into_iter()
        .filter(|s| s.kind == FileKind::Regular)
        .map(|s| {
            (
                s.path.rsplit(|&b| b == b'/').next().unwrap().to_vec(),
                s.hash.is_some(),
            )
        })
        .collect();
    let want: Vec<(Vec<u8>, bool)> = [
        ("stat_only", false),
        ("then_read", true),
        ("then_truncated", true),
    ]
    .map(|(n, s)| (n.as_bytes().to_vec(), s))
    .into();
    let mut sums = sums;
    sums.sort();
    assert_eq!(sums, want);

    // Prepared, the queried file has its size and the read one its bytes.
    let (dir, _root) = prepared(&records);
    let inside = dir.path().join(base.strip_prefix("/").unwrap());
    assert_eq!(
        std::fs::read(inside.join("then_read")).unwrap(),
        b"contents of then_read"
    );
    assert_eq!(
        std::fs::metadata(inside.join("stat_only")).unwrap().len(),
        "contents of stat_only".len() as u64
    );
}

/// The kernel drops a file's capabilities when it is written or changes
/// owner, both of which preparing does after applying a state.
#[test]
fn file_capabilities_survive_preparation() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED file_capabilities_survive_preparation: needs root (CAP_SETFCAP)");
        return;
    }
    let src = tempfile::tempdir().unwrap();
    let f = src.path().join("helper");
    std::fs::write(&f, b"\x7fELF not really").unwrap();
    // VFS_CAP_REVISION_2 with CAP_NET_BIND_SERVICE permitted.
    let cap: [u8; 20] = [1, 0, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let path = std::ffi::CString::new(f.as_os_str().as_bytes()).unwrap();
    let r = unsafe {
        libc::setxattr(
            path.as_ptr(),
            c"security.capability".as_ptr(),
            cap.as_ptr().cast(),
            cap.len(),
            0,
        )
    };
    assert_eq!(r, 0, "setxattr: {}", std::io::Error::last_os_error());
    let (_, records) = snapshot(SnapshotPolicy::Contents, &[&f]);
    let (_dir, root) = prepared(&records);
    let host = Root::host().unwrap();
    let want = path_state(&host, f.as_os_str().as_bytes(), PathPhase::After).unwrap();
    let got = path_state(&root, f.as_os_str().as_bytes(), PathPhase::After).unwrap();
    assert_eq!(want.xattrs.len(), 1);
    assert_eq!(compare(&want, &got, &Owners::All), Vec::<String>::new());
}

/// Two names of one file (a hard link) are one file again in replay: its
/// contents are recorded once, under the first name the trace touched,
/// and a write through one name shows through the other.
#[test]
fn hard_links_are_prepared_as_one_file() {
    let src = tempfile::tempdir().unwrap();
    let base = src.path();
    std::fs::write(base.join("a"), b"shared").unwrap();
    std::fs::hard_link(base.join("a"), base.join("b")).unwrap();
    std::fs::write(base.join("single"), b"alone").unwrap();
    let (_, records) = snapshot(
        SnapshotPolicy::Contents,
        &[&base.join("b"), &base.join("a"), &base.join("single")],
    );
    let st = states(&records);
    let of = |name: &str| {
        let p = base.join(name);
        let s = st
            .iter()
            .find(|s| s.path == p.as_os_str().as_bytes())
            .unwrap();
        (s.link, s.content)
    };
    let (link, content) = of("b");
    assert!(link != 0);
    assert_eq!(content, ContentNote::Complete);
    assert_eq!(of("a"), (link, ContentNote::Skipped), "recorded once");
    assert_eq!(of("single").0, 0);

    let (dir, _root) = prepared(&records);
    let inside = dir.path().join(base.strip_prefix("/").unwrap());
    assert_eq!(std::fs::read(inside.join("a")).unwrap(), b"shared");
    std::fs::write(inside.join("a"), b"written through a").unwrap();
    assert_eq!(
        std::fs::read(inside.join("b")).unwrap(),
        b"written through a"
    );
}

/// Names of one file only queried first, then read in another order
/// (`stat x y z; cat y z x`): the contents come with the first read name,
/// `y`, and the later states of `x` (the first name) and `z` carry none.
/// Preparing keeps the one file filled. Before, `x`'s second state made
/// the file anew, empty, under all three names (3 reads mismatched).
#[test]
fn hard_links_queried_first_keep_the_contents_another_name_brought() {
    let src = tempfile::tempdir().unwrap();
    let base = src.path();
    std::fs::write(base.join("x"), b"the one file").unwrap();
    std::fs::set_permissions(base.join("x"), std::fs::Permissions::from_mode(0o751)).unwrap();
    std::fs::hard_link(base.join("x"), base.join("y")).unwrap();
    std::fs::hard_link(base.join("x"), base.join("z")).unwrap();
    let names = ["x", "y", "z"].map(|n| base.join(n));
    let mut snap = Snapshotter::new(SnapshotPolicy::Contents).unwrap();
    let mut records = Vec::new();
    let [x, y, z] = &names;
    touch(&mut snap, &mut records, &[x, y, z], Need::Query);
    touch(&mut snap, &mut records, &[y, z, x], Need::Contents);
    let with_contents: Vec<_> = states(&records)
        .iter()
        .filter(|s| s.content == ContentNote::Complete)
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(with_contents, [y.as_os_str().as_bytes()], "recorded once");
    let (dir, _root) = prepared(&records);
    let inside = dir.path().join(base.strip_prefix("/").unwrap());
    for name in ["x", "y", "z"] {
        assert_eq!(
            std::fs::read(inside.join(name)).unwrap(),
            b"the one file",
            "{name}"
        );
        let mode = std::fs::metadata(inside.join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o751, "{name}");
    }
}

/// A directory the trace moves carries entries it has not named; later
/// calls name them under the new path, which the recording saw absent, so
/// the whole tree is recorded before the move, contents included (also
/// of files only queried so far).
#[test]
fn a_directory_about_to_move_has_its_whole_tree_recorded() {
    let src = tempfile::tempdir().unwrap();
    let d = src.path().join("d");
    std::fs::create_dir_all(d.join("sub/deeper")).unwrap();
    std::fs::write(d.join("queried"), b"queried before").unwrap();
    std::fs::write(d.join("sub/deeper/f"), b"deep down").unwrap();
    symlink("sub", d.join("l")).unwrap();
    let mut snap = Snapshotter::new(SnapshotPolicy::Contents).unwrap();
    let mut records = Vec::new();
    touch(&mut snap, &mut records, &[&d.join("queried")], Need::Query);
    touch(
        &mut snap,
        &mut records,
        &[&d, &src.path().join("new")],
        Need::Tree,
    );
    let data = |name: &str| -> Vec<u8> {
        let p = d.join(name);
        records
            .iter()
            .filter_map(|r| match r {
                Record::PathData(x) if x.path == p.as_os_str().as_bytes() => x.data.data.as_deref(),
                _ => None,
            })
            .flat_map(|b| b.iter().copied())
            .collect()
    };
    assert_eq!(data("queried"), b"queried before");
    assert_eq!(data("sub/deeper/f"), b"deep down");
    let st = states(&records);
    let l = d.join("l");
    assert!(st
        .iter()
        .any(|s| s.path == l.as_os_str().as_bytes() && s.kind == FileKind::Symlink));

    // Prepared and moved as the trace moves it, the tree is all there.
    let (dir, root) = prepared(&records);
    let inside = dir.path().join(src.path().strip_prefix("/").unwrap());
    std::fs::rename(inside.join("d"), inside.join("new")).unwrap();
    assert_eq!(
        std::fs::read(inside.join("new/sub/deeper/f")).unwrap(),
        b"deep down"
    );
    drop(root);
}

/// `cp --sparse`, `qemu-img` and databases ask where a sparse file's data
/// is (`SEEK_DATA`, `SEEK_HOLE`): its holes are neither read nor
/// recorded, and preparing leaves them holes, with the same sum.
#[test]
fn sparse_files_keep_their_holes() {
    use std::io::{Seek, SeekFrom, Write};
    use std::os::unix::fs::FileExt;
    const MIB: u64 = 1 << 20;
    let src = tempfile::tempdir().unwrap();
    let path = src.path().join("sparse");
    let mut f = std::fs::File::create(&path).unwrap();
    f.set_len(64 * MIB).unwrap();
    f.write_all(b"head").unwrap();
    f.write_all_at(b"middle", 40 * MIB).unwrap();
    f.sync_all().unwrap();
    let data_after = |f: &mut std::fs::File, at: u64| {
        // SAFETY: lseek on an open descriptor.
        let r = unsafe {
            libc::lseek(
                std::os::fd::AsRawFd::as_raw_fd(f),
                at as libc::off_t,
                libc::SEEK_DATA,
            )
        };
        f.seek(SeekFrom::Start(0)).unwrap();
        r
    };
    let hole_found = data_after(&mut f, 4096);
    assert!(
        (4096..=40 * MIB as i64).contains(&hole_found),
        "the test's file system must report holes (SEEK_DATA gave {hole_found})"
    );

    let (_, records) = snapshot(SnapshotPolicy::Contents, &[&path]);
    let pieces: Vec<(u64, u64)> = records
        .iter()
        .filter_map(|r| match r {
            Record::PathData(d) => Some((d.offset, d.data.len)),
            _ => None,
        })
        .collect();
    let recorded: u64 = pieces.iter().map(|p| p.1).sum();
    assert!(recorded <= 2 * MIB, "holes recorded: {pieces:?}");
    assert!(pieces
        .iter()
        .any(|p| (p.0..p.0 + p.1).contains(&(40 * MIB))));

    let (dir, root) = prepared(&records);
    let inside = dir.path().join(path.strip_prefix("/").unwrap());
    let mut copy = std::fs::File::open(&inside).unwrap();
    assert_eq!(copy.metadata().unwrap().len(), 64 * MIB);
    assert_eq!(data_after(&mut copy, 4096), hole_found, "the hole is kept");
    let mut buf = [0u8; 6];
    copy.read_exact_at(&mut buf, 40 * MIB).unwrap();
    assert_eq!(&buf, b"middle");
    copy.read_exact_at(&mut buf[..4], 0).unwrap();
    assert_eq!(&buf[..4], b"head");

    // A piece wholly in a hole is summed without reading: same sum.
    let host = Root::open(Path::new("/")).unwrap();
    let original = path_state(&host, path.as_os_str().as_bytes(), PathPhase::After).unwrap();
    let again = path_state(&root, path.as_os_str().as_bytes(), PathPhase::After).unwrap();
    assert!(original.hash.is_some());
    assert_eq!(original.hash, again.hash);
    let whole = std::fs::read(&path).unwrap();
    let mut sums = Vec::new();
    for piece in whole.chunks(reanimator_trace::HASH_PIECE as usize) {
        sums.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(piece).to_le_bytes());
    }
    assert_eq!(
        original.hash,
        Some(reanimator_trace::ContentHash::Pieces(
            xxhash_rust::xxh3::xxh3_128(&sums)
        ))
    );
}

/// Paths longer than `PATH_MAX` (a program deep in a tree names its files
/// relative to a working directory with a longer absolute name) resolve
/// inside the root a piece at a time; a piece that would climb out of
/// where the one before it reached, or meets an absolute symbolic link, is
/// refused, so confinement does not depend on the length. `host_name`
/// names such a directory, which the kernel's `/proc` link cannot.
#[test]
fn paths_longer_than_path_max_resolve_inside_the_root() {
    use std::os::fd::{AsFd, AsRawFd};
    let tmp = tempfile::tempdir().unwrap();
    let root = Root::open(tmp.path()).unwrap();
    let mut deep = Vec::new();
    for _ in 0..250 {
        deep.extend_from_slice(b"/dddddddddddddddddddd");
        let (dir, name) = root.parent(&deep).unwrap();
        // SAFETY: a valid descriptor and C string.
        assert_eq!(
            unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o755) },
            0
        );
    }
    assert!(deep.len() > 5000);
    let mut leaf = deep.clone();
    leaf.extend_from_slice(b"/leaf");
    let fd = root
        .open_at(&leaf, libc::O_WRONLY | libc::O_CREAT, 0o644)
        .unwrap();
    drop(fd);
    let st = path_state(&root, &leaf, PathPhase::After).unwrap();
    assert_eq!((st.kind, st.size), (FileKind::Regular, 0));

    // The deepest directory's name, from its descriptor.
    let dir = root
        .open_at(&deep, libc::O_PATH | libc::O_DIRECTORY, 0)
        .unwrap();
    let mut expected = tmp.path().as_os_str().as_bytes().to_vec();
    expected.extend_from_slice(&deep);
    assert_eq!(
        reanimator_fsstate::host_name(dir.as_fd()).unwrap(),
        expected
    );
    assert_eq!(root.name_of(dir.as_fd()).unwrap(), deep);

    // Climbing out of the piece before, and an absolute symbolic link,
    // are refused rather than resolved anywhere else.
    let mut climb = deep.clone();
    climb.extend_from_slice(&b"/..".repeat(260));
    climb.extend_from_slice(b"/escaped");
    let err = root
        .open_at(&climb, libc::O_WRONLY | libc::O_CREAT, 0o644)
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENAMETOOLONG));
    let mut link = deep.clone();
    link.extend_from_slice(b"/abs");
    let (dir, name) = root.parent(&link).unwrap();
    // SAFETY: a valid descriptor and C strings.
    assert_eq!(
        unsafe { libc::symlinkat(c"/".as_ptr(), dir.as_raw_fd(), name.as_ptr()) },
        0
    );
    link.extend_from_slice(b"/escaped");
    let err = root
        .open_at(&link, libc::O_WRONLY | libc::O_CREAT, 0o644)
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENAMETOOLONG));
    assert!(!tmp.path().join("escaped").exists() && !Path::new("/escaped").exists());
}

/// A symbolic link the trace made leads to files that were there before
/// it: `ln -s /etc/hostname abs; cat abs`, or a relative link inside a
/// directory the trace made, reached through another link it made. Their
/// states and contents are recorded when a call goes through the link.
/// Before, the walk stopped at the first component the trace had made,
/// and replay read zeros where `cat` had read the file.
#[test]
fn links_the_trace_made_lead_to_files_from_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (pre, work) = (tmp.path().join("pre"), tmp.path().join("w"));
    std::fs::create_dir_all(&pre).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(pre.join("file"), "before\n").unwrap();
    std::fs::write(pre.join("file2"), "before too\n").unwrap();
    let (abs, d, dl) = (work.join("abs"), work.join("d"), work.join("dl"));
    // What the trace names first, as it makes it: absent.
    let (mut snap, mut records) = snapshot(SnapshotPolicy::Contents, &[&abs, &d, &dl]);
    for made in [&abs, &d, &dl] {
        let state = states(&records)
            .into_iter()
            .find(|s| s.path == made.as_os_str().as_bytes())
            .unwrap();
        assert_eq!(state.kind, FileKind::Absent);
    }
    symlink(pre.join("file"), &abs).unwrap();
    std::fs::create_dir(&d).unwrap();
    symlink("../../pre/file2", d.join("rel")).unwrap();
    symlink("d", &dl).unwrap();
    let before = records.len();
    touch(
        &mut snap,
        &mut records,
        &[&abs, &dl.join("rel")],
        Need::Contents,
    );
    let new = &records[before..];
    for (file, body) in [("file", &b"before\n"[..]), ("file2", b"before too\n")] {
        let path = pre.join(file);
        let state = states(new)
            .into_iter()
            .find(|s| s.path == path.as_os_str().as_bytes())
            .unwrap_or_else(|| panic!("{file} not recorded"));
        assert_eq!(
            (state.kind, state.content, state.size),
            (FileKind::Regular, ContentNote::Complete, body.len() as u64),
            "{file}"
        );
    }
}

/// A damaged trace (`recover` kept what it could) may lack the states of
/// a file's directories, or of a file whose contents it holds: the
/// preparer makes them (directories 0755, files 0644) and says so, where
/// it once stopped the whole replay with "No such file or directory".
#[test]
fn states_whose_directories_were_lost_are_prepared_in_made_up_ones() {
    let src = tempfile::tempdir().unwrap();
    let base = src.path();
    std::fs::create_dir_all(base.join("d/e")).unwrap();
    std::fs::write(base.join("d/e/f"), b"kept").unwrap();
    std::fs::write(base.join("d/g"), b"contents only").unwrap();
    let (_, records) = snapshot(
        SnapshotPolicy::Contents,
        &[&base.join("d/e/f"), &base.join("d/g")],
    );
    let lost = |r: &Record| match r {
        // Every directory's state, and g's, went with a damaged frame.
        Record::PathState(s) => {
            s.kind == FileKind::Directory || s.path == base.join("d/g").as_os_str().as_bytes()
        }
        _ => false,
    };
    let damaged: Vec<Record> = records.into_iter().filter(|r| !lost(r)).collect();
    let dir = tempfile::tempdir().unwrap();
    let root = Root::open(dir.path()).unwrap();
    let mut prep = Preparer::new(&root, false);
    for r in &damaged {
        prep.apply(r).unwrap();
    }
    let report = prep.finish().unwrap();
    let inside = dir.path().join(base.strip_prefix("/").unwrap());
    assert_eq!(std::fs::read(inside.join("d/e/f")).unwrap(), b"kept");
    assert_eq!(std::fs::read(inside.join("d/g")).unwrap(), b"contents only");
    assert!(report.made_up_dirs >= 3, "{report:?}");
    assert_eq!(report.made_up_files, 1, "{report:?}");
    let mode = std::fs::metadata(inside.join("d/e"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o755);
}

/// With `replace`, a path in the way of a recorded state goes, directory
/// and all, and the report counts it: the user must hear of it.
#[test]
fn replacing_counts_what_was_in_the_way() {
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(src.path().join("usr/lib")).unwrap();
    symlink("usr/lib", src.path().join("lib")).unwrap();
    let (_, records) = snapshot(SnapshotPolicy::Contents, &[&src.path().join("lib")]);
    let dir = tempfile::tempdir().unwrap();
    let in_the_way = dir
        .path()
        .join(src.path().strip_prefix("/").unwrap())
        .join("lib");
    std::fs::create_dir_all(in_the_way.join("sub")).unwrap();
    std::fs::write(in_the_way.join("sub/kept"), b"mine").unwrap();
    let root = Root::open(dir.path()).unwrap();
    let mut prep = Preparer::new(&root, true);
    for r in &records {
        prep.apply(r).unwrap();
    }
    let report = prep.finish().unwrap();
    assert_eq!(report.removed, 1, "{report:?}");
    assert!(std::fs::symlink_metadata(&in_the_way)
        .unwrap()
        .file_type()
        .is_symlink());
}
