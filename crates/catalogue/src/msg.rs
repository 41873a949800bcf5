//! A message's control data (`msg_control` of `sendmsg` and `recvmsg`),
//! as the recorders capture it: the ancillary messages replay and text
//! need to read, descriptors passed with `SCM_RIGHTS` above all.

/// `SOL_SOCKET`: the level of the socket layer's own messages.
pub const SOL_SOCKET: i32 = 1;
/// `SCM_RIGHTS`: a message passing descriptors.
pub const SCM_RIGHTS: i32 = 1;

/// One ancillary message (`struct cmsghdr` and its data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancillary<'a> {
    /// `cmsg_level` (`SOL_SOCKET`, ...).
    pub level: i32,
    /// `cmsg_type` (`SCM_RIGHTS`, `SCM_CREDENTIALS`, ...).
    pub kind: i32,
    /// The data after the header.
    pub data: &'a [u8],
}

impl Ancillary<'_> {
    /// The descriptors an `SCM_RIGHTS` message carries; none for others.
    pub fn fds(&self) -> Vec<i32> {
        if self.level != SOL_SOCKET || self.kind != SCM_RIGHTS {
            return Vec::new();
        }
        self.data
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect()
    }
}

/// The ancillary messages in `control`: 16-byte headers (`cmsg_len`,
/// `cmsg_level`, `cmsg_type`), each message padded to 8 bytes. A message
/// cut short (a truncated capture) ends the list.
pub fn ancillary(control: &[u8]) -> Vec<Ancillary<'_>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(h) = control.get(at..at + 16) {
        let len = (u64::from_le_bytes(h[..8].try_into().expect("8 bytes")) as usize).max(16);
        let Some(data) = control.get(at + 16..at.saturating_add(len)) else {
            break;
        };
        out.push(Ancillary {
            level: i32::from_le_bytes(h[8..12].try_into().expect("4 bytes")),
            kind: i32::from_le_bytes(h[12..16].try_into().expect("4 bytes")),
            data,
        });
        at = at.saturating_add(len.next_multiple_of(8));
    }
    out
}

/// The descriptors every `SCM_RIGHTS` message in `control` carries.
pub fn passed_fds(control: &[u8]) -> Vec<i32> {
    ancillary(control).iter().flat_map(Ancillary::fds).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(len: u64, level: i32, kind: i32) -> Vec<u8> {
        [
            &len.to_le_bytes()[..],
            &level.to_le_bytes(),
            &kind.to_le_bytes(),
        ]
        .concat()
    }

    /// Two messages, the first padded; a cut third is dropped.
    #[test]
    fn descriptors_are_read_from_every_rights_message() {
        let mut c = header(20, libc::SOL_SOCKET, libc::SCM_RIGHTS);
        c.extend(4i32.to_le_bytes());
        c.extend([0; 4]);
        c.extend(header(28, libc::SOL_SOCKET, libc::SCM_CREDENTIALS));
        c.extend([7; 12]);
        c.extend([0; 4]);
        c.extend(header(24, libc::SOL_SOCKET, libc::SCM_RIGHTS));
        c.extend(5i32.to_le_bytes());
        c.extend(6i32.to_le_bytes());
        c.extend(header(24, libc::SOL_SOCKET, libc::SCM_RIGHTS));
        c.extend(9i32.to_le_bytes());
        assert_eq!(passed_fds(&c), [4, 5, 6]);
        let kinds: Vec<i32> = ancillary(&c).iter().map(|a| a.kind).collect();
        assert_eq!(
            kinds,
            [libc::SCM_RIGHTS, libc::SCM_CREDENTIALS, libc::SCM_RIGHTS]
        );
        assert!(passed_fds(&[1, 2, 3]).is_empty());
        assert!(passed_fds(&header(u64::MAX, 1, 1)).is_empty());
    }
}
