//! How traces name paths: absolute, joined with a base directory, and
//! whether they lie on a pseudo file system.

/// The absolute path of `rel` against `base` (`rel` itself when absolute):
/// `.` components and repeated slashes removed, `..` and symbolic links
/// left for resolution. Recorders and the replayer use this same function,
/// so a path is named identically on both sides.
pub fn join(base: &[u8], rel: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(base.len() + rel.len() + 1);
    let parts = if rel.first() == Some(&b'/') {
        [&b""[..], rel]
    } else {
        [base, rel]
    };
    for part in parts {
        for c in part.split(|&b| b == b'/') {
            if c.is_empty() || c == b"." {
                continue;
            }
            out.push(b'/');
            out.extend_from_slice(c);
        }
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

/// The path of a regular file a process had open when the recorder began
/// following it (`start` is how it began), when replay opens that file
/// again instead of simulating the descriptor: the recorders record the
/// file's state before the process runs on, since it may write to it
/// through no call that names it. Any file outside the pseudo file
/// systems, of a command the recorder spawned (`cmd > build.log`: replay
/// writes the command's output into it again; `cmd < in`, `3<> f`) or of
/// a process attached to (`record -p PID`: its log, its database). Until
/// 2026-11-28 an attached process's files were simulated, so the writes
/// through them went nowhere; until 2026-11-29 a spawned command's input
/// files were, so `cat < in > out` (which copies with
/// `copy_file_range`, whose bytes no trace holds) left `out` empty and
/// `3<> f` never made `f`. `None` for anything else (a terminal, a pipe,
/// a descriptor of a created process, which replay derives from its
/// parent).
pub fn reopened_at_start(
    start: reanimator_trace::StartCause,
    fd: &reanimator_trace::FdInfo,
) -> Option<&[u8]> {
    use reanimator_trace::StartCause;
    let path = &fd.target;
    let named = path.first() == Some(&b'/') && !is_pseudo(path);
    let kept = start != StartCause::Created;
    (named && kept).then_some(path.as_slice())
}

/// [`join`], keeping what the kernel reads in a path's end: a final `.`
/// (`rmdir("d/.")` is `EINVAL`) and a trailing slash (`lstat("link/")`
/// follows the link, `stat("file/")` is `ENOTDIR`). For replaying a call;
/// paths are named (snapshots, manifests) with [`join`].
pub fn join_as_called(base: &[u8], rel: &[u8]) -> Vec<u8> {
    let mut out = join(base, rel);
    let (last, slash) = final_component(rel);
    if last == b"." {
        if out != b"/" {
            out.push(b'/');
        }
        out.push(b'.');
    } else if slash && out != b"/" {
        out.push(b'/');
    }
    out
}

/// A path's final component (empty for `/` or `""`) and whether trailing
/// slashes follow it.
pub(crate) fn final_component(path: &[u8]) -> (&[u8], bool) {
    let trimmed = &path[..path.len() - path.iter().rev().take_while(|&&b| b == b'/').count()];
    let last = trimmed.rsplit(|&b| b == b'/').next().unwrap_or_default();
    (last, trimmed.len() < path.len())
}

/// A relative path's first component other than `.` (empty components
/// skipped too) and what follows it after its slash; `None` for a path of
/// no such component (`""`, `.`, `./.`). Walks `..`s one at a time from a
/// removed directory, in the recorders and in replay alike.
pub fn first_component(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut rest = path;
    loop {
        let (c, after) = match rest.iter().position(|&b| b == b'/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &b""[..]),
        };
        if !c.is_empty() && c != b"." {
            return Some((c, after));
        }
        if after.is_empty() {
            return None;
        }
        rest = after;
    }
}

/// An absolute path with its `..` components taken lexically (each drops
/// the component before it): right where no symbolic link precedes a `..`.
/// Replay compares traced names of one directory with it.
pub fn lexical(abs_path: &[u8]) -> Vec<u8> {
    let mut out: Vec<&[u8]> = Vec::new();
    for c in abs_path.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                out.pop();
            }
            _ => out.push(c),
        }
    }
    let mut p = Vec::with_capacity(abs_path.len());
    for c in out {
        p.push(b'/');
        p.extend_from_slice(c);
    }
    if p.is_empty() {
        p.push(b'/');
    }
    p
}

/// True for paths on the kernel's pseudo file systems (`/proc`, `/sys`,
/// `/dev`): never snapshotted, and simulated in replay.
pub fn is_pseudo(abs_path: &[u8]) -> bool {
    ["/proc", "/sys", "/dev"].iter().any(|p| {
        let p = p.as_bytes();
        abs_path.starts_with(p) && (abs_path.len() == p.len() || abs_path[p.len()] == b'/')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_component_skips_dots_and_slashes() {
        assert_eq!(first_component(b"../x"), Some((&b".."[..], &b"x"[..])));
        assert_eq!(
            first_component(b"./..//y/"),
            Some((&b".."[..], &b"/y/"[..]))
        );
        assert_eq!(first_component(b"x"), Some((&b"x"[..], &b""[..])));
        assert_eq!(first_component(b".."), Some((&b".."[..], &b""[..])));
        assert_eq!(first_component(b""), None);
        assert_eq!(first_component(b"./."), None);
        assert_eq!(first_component(b".//"), None);
    }

    #[test]
    fn lexical_takes_dot_dot_by_name() {
        assert_eq!(lexical(b"/etc/../proc/self/mounts"), b"/proc/self/mounts");
        assert_eq!(lexical(b"/../a/./b/.."), b"/a");
        assert_eq!(lexical(b"/a/.."), b"/");
    }

    #[test]
    fn joins_like_the_kernel_names_paths() {
        assert_eq!(join(b"/a/b", b"c"), b"/a/b/c");
        assert_eq!(join(b"/a/b", b"/x//./y/"), b"/x/y");
        assert_eq!(join(b"/a", b"../c"), b"/a/../c");
        assert_eq!(join(b"/", b"."), b"/");
        assert_eq!(join_as_called(b"/a", b"d/."), b"/a/d/.");
        assert_eq!(join_as_called(b"/a", b"./"), b"/a/.");
        assert_eq!(join_as_called(b"/", b"."), b"/.");
        assert_eq!(join_as_called(b"/a", b"d//"), b"/a/d/");
        assert_eq!(join_as_called(b"/a", b"../"), b"/a/../");
        assert_eq!(join_as_called(b"/a", b"/"), b"/");
        assert_eq!(join_as_called(b"/a", b"b/./c"), b"/a/b/c");
        assert!(is_pseudo(b"/proc/self/maps") && is_pseudo(b"/dev"));
        assert!(!is_pseudo(b"/devices") && !is_pseudo(b"/home/proc"));
    }
}
