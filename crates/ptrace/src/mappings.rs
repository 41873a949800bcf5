//! Shared writable file mappings of each traced process.
//!
//! A store through a `MAP_SHARED` file mapping changes the file with no
//! system call. The recorder remembers where such mappings are so that a
//! `munmap` or `msync` over one (a [`Kind::Mapped`] argument) captures the
//! bytes that reach the file, and replay can write them back.
//!
//! [`Kind::Mapped`]: reanimator_catalogue::Kind::Mapped

use std::collections::HashMap;

use reanimator_catalogue::Effect;

/// Address ranges `[start, end)` per thread group.
#[derive(Default)]
pub(crate) struct SharedMappings {
    by_tgid: HashMap<u32, Vec<(u64, u64)>>,
}

impl SharedMappings {
    /// The ranges of process `tgid`.
    pub fn of(&self, tgid: u32) -> &[(u64, u64)] {
        self.by_tgid.get(&tgid).map_or(&[], Vec::as_slice)
    }

    /// Follows a call that succeeded with `ret`: mmap adds a range, munmap
    /// removes one, mremap moves one.
    pub fn after_call(&mut self, tgid: u32, effect: Effect, args: &[u64; 6], ret: i64) {
        let len = |n: u64| n.div_ceil(4096) * 4096;
        match effect {
            Effect::Map => {
                let (prot, flags, fd) = (args[2] as i32, args[3] as i32, args[4] as i32);
                let shared = flags & libc::MAP_TYPE == libc::MAP_SHARED
                    || flags & libc::MAP_TYPE == libc::MAP_SHARED_VALIDATE;
                let start = ret as u64;
                // MAP_FIXED replaces whatever was there.
                self.remove(tgid, start, start + len(args[1]));
                if shared
                    && prot & libc::PROT_WRITE != 0
                    && flags & libc::MAP_ANONYMOUS == 0
                    && fd >= 0
                {
                    self.by_tgid
                        .entry(tgid)
                        .or_default()
                        .push((start, start + len(args[1])));
                }
            }
            Effect::Unmap => self.remove(tgid, args[0], args[0] + len(args[1])),
            Effect::Remap => {
                let (old, old_len, new_len) = (args[0], len(args[1]), len(args[2]));
                let moved = self
                    .of(tgid)
                    .iter()
                    .any(|&(s, e)| s < old + old_len && old < e);
                self.remove(tgid, old, old + old_len);
                if moved {
                    let start = ret as u64;
                    self.by_tgid
                        .entry(tgid)
                        .or_default()
                        .push((start, start + new_len));
                }
            }
            _ => {}
        }
    }

    /// Drops `[start, end)` from the process's ranges, splitting any that
    /// straddle it.
    fn remove(&mut self, tgid: u32, start: u64, end: u64) {
        let Some(ranges) = self.by_tgid.get_mut(&tgid) else {
            return;
        };
        let mut kept = Vec::with_capacity(ranges.len());
        for &(s, e) in ranges.iter() {
            if e <= start || end <= s {
                kept.push((s, e));
                continue;
            }
            if s < start {
                kept.push((s, start));
            }
            if end < e {
                kept.push((end, e));
            }
        }
        *ranges = kept;
    }

    /// The process's address space is gone (exec or exit): returns how many
    /// shared writable mappings it still had, whose last stores (after the
    /// last `msync`) the trace cannot hold.
    pub fn forget(&mut self, tgid: u32) -> usize {
        self.by_tgid.remove(&tgid).map_or(0, |r| r.len())
    }
}

/// True when `[addr, addr + len)` overlaps one of `ranges`.
pub(crate) fn overlaps(ranges: &[(u64, u64)], addr: u64, len: u64) -> bool {
    ranges
        .iter()
        .any(|&(s, e)| s < addr.saturating_add(len) && addr < e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_shared_writable_file_mappings_only() {
        let mut m = SharedMappings::default();
        let shared = [0, 8192, 3, libc::MAP_SHARED as u64, 5, 0];
        let private = [0, 8192, 3, libc::MAP_PRIVATE as u64, 5, 0];
        let read_only = [0, 8192, 1, libc::MAP_SHARED as u64, 5, 0];
        m.after_call(1, Effect::Map, &shared, 0x10000);
        m.after_call(1, Effect::Map, &private, 0x20000);
        m.after_call(1, Effect::Map, &read_only, 0x30000);
        assert_eq!(m.of(1), &[(0x10000, 0x12000)]);
        assert!(overlaps(m.of(1), 0x11000, 1) && !overlaps(m.of(1), 0x12000, 4096));
        // A partial munmap splits; mremap moves.
        m.after_call(1, Effect::Unmap, &[0x10000, 4096, 0, 0, 0, 0], 0);
        assert_eq!(m.of(1), &[(0x11000, 0x12000)]);
        m.after_call(1, Effect::Remap, &[0x11000, 4096, 8192, 1, 0, 0], 0x40000);
        assert_eq!(m.of(1), &[(0x40000, 0x42000)]);
        assert_eq!(m.forget(1), 1);
        assert!(m.of(1).is_empty());
    }
}
