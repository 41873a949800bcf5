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
    fn joins_like_the_kernel_names_paths() {
        assert_eq!(join(b"/a/b", b"c"), b"/a/b/c");
        assert_eq!(join(b"/a/b", b"/x//./y/"), b"/x/y");
        assert_eq!(join(b"/a", b"../c"), b"/a/../c");
        assert_eq!(join(b"/", b"."), b"/");
        assert!(is_pseudo(b"/proc/self/maps") && is_pseudo(b"/dev"));
        assert!(!is_pseudo(b"/devices") && !is_pseudo(b"/home/proc"));
    }
}
