//! Owners a replay can reproduce, and the access it gives in their place.
//!
//! Only root can give a file to another user. A replay that is not root
//! creates every path as the replayer's own, so a recorded program's
//! access to another user's files (root's `0700` home directory, a
//! `0755` system directory it could not write in) would change: the
//! replayer, as owner, has the owner's permission bits. Preparing sets
//! those bits to what the recorded user had on the file instead, and the
//! checks leave out the owner, and the owner bits, of such paths.

/// Which owners a replay reproduces, and so compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owners {
    /// Replaying as root: every owner is set as recorded.
    All,
    /// Replaying, not as root, as the user the recording ran as: that
    /// user's paths are theirs again, in any group the replayer is in;
    /// other users' are the replayer's, with owner bits standing for the
    /// recorded access.
    OwnOnly {
        /// The replayer's effective user id.
        uid: u32,
        /// Its effective group id and supplementary groups.
        gids: Vec<u32>,
    },
    /// Replaying, not as root, as another user than recorded: no owner
    /// is reproduced.
    None,
}

impl Owners {
    /// Whether a path recorded as owned by `uid`:`gid` has that owner in
    /// replay.
    pub fn kept(&self, uid: u32, gid: u32) -> bool {
        match self {
            Owners::All => true,
            Owners::OwnOnly { uid: own, gids } => *own == uid && gids.contains(&gid),
            Owners::None => false,
        }
    }

    /// The mode bits to compare of a path recorded as owned by `uid`: its
    /// owner bits only if it is the replayer's (otherwise preparing may
    /// have set them to the recorded user's access).
    pub fn mode_mask(&self, uid: u32) -> u32 {
        match self {
            Owners::All => !0,
            Owners::OwnOnly { uid: own, .. } if *own == uid => !0,
            _ => !0o700,
        }
    }
}

/// The user the recorded processes ran as: their access to each file is
/// what a replay that is not root reproduces in the owner bits of paths it
/// cannot give to their owner.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Viewer {
    /// Effective user id.
    pub uid: u32,
    /// Effective group id and supplementary groups.
    pub gids: Vec<u32>,
}

impl Viewer {
    /// `mode` with its owner bits replaced by the permissions this user
    /// had on a path of `mode` owned by `uid`:`gid` (the owner's bits if
    /// theirs, the group's if in its group, the others' otherwise). A
    /// directory keeps its owner's write bit: without it the replayer could
    /// not remove the replay root afterwards (`rm -rf` cannot empty a
    /// directory it may not write), and reading and searching are what
    /// decide which paths a program can reach. Root passes every check by
    /// capability, not by bits: unchanged.
    pub fn as_owner(&self, mode: u32, uid: u32, gid: u32, dir: bool) -> u32 {
        if self.uid == 0 {
            return mode;
        }
        let had = if uid == self.uid {
            (mode >> 6) & 7
        } else if self.gids.contains(&gid) {
            (mode >> 3) & 7
        } else {
            mode & 7
        };
        let bits = if dir {
            ((mode >> 6) & 7) & (had | 0o2)
        } else {
            had
        };
        (mode & !0o700) | (bits << 6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_bits_stand_for_the_recorded_users_access() {
        let nobody = Viewer {
            uid: 65534,
            gids: vec![65534, 100],
        };
        // root's home: no reading, no searching.
        assert_eq!(nobody.as_owner(0o700, 0, 0, true), 0o200);
        // A system directory: as it was (the owner may still write).
        assert_eq!(nobody.as_owner(0o755, 0, 0, true), 0o755);
        // Sticky /tmp: everything, sticky bit kept.
        assert_eq!(nobody.as_owner(0o1777, 0, 0, true), 0o1777);
        // A system file: read and run, no writing.
        assert_eq!(nobody.as_owner(0o755, 0, 0, false), 0o555);
        // Through a group the user is in.
        assert_eq!(nobody.as_owner(0o640, 0, 100, false), 0o440);
        // Their own file: as recorded.
        assert_eq!(nobody.as_owner(0o444, 65534, 65534, false), 0o444);
        let root = Viewer::default();
        assert_eq!(root.as_owner(0o700, 1000, 1000, true), 0o700);
    }

    #[test]
    fn only_kept_owners_and_their_bits_are_compared() {
        assert!(Owners::All.kept(0, 0) && Owners::All.mode_mask(7) == !0);
        let me = Owners::OwnOnly {
            uid: 1000,
            gids: vec![1000, 27],
        };
        assert!(me.kept(1000, 1000) && me.kept(1000, 27));
        // A group the replayer is not in cannot be given.
        assert!(!me.kept(1000, 0));
        assert!(!me.kept(0, 1000));
        assert_eq!(me.mode_mask(1000), !0);
        assert_eq!(me.mode_mask(0), !0o700);
        assert!(!Owners::None.kept(1000, 1000));
    }
}
