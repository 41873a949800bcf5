//! LEB128 variable-length integers, the encoding of every number inside a
//! frame: small values (deltas, fds, lengths) take one byte.

/// Appends `v` as unsigned LEB128.
#[inline]
pub(crate) fn put(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends `v` zig-zag encoded, so small negative numbers stay short.
#[inline]
pub(crate) fn put_signed(buf: &mut Vec<u8>, v: i64) {
    put(buf, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends a length-prefixed byte string.
#[inline]
pub(crate) fn put_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    put(buf, b.len() as u64);
    buf.extend_from_slice(b);
}

/// A cursor over a decoded frame payload. Every read is bounds-checked and
/// returns `None` on malformed input, never panics.
pub(crate) struct Cursor<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline]
    pub(crate) fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    #[inline(always)]
    pub(crate) fn get(&mut self) -> Option<u64> {
        // One-byte values (most deltas, ids, flags, lengths) stay inline;
        // the loop is out of line so every call site stays small.
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Some(u64::from(b));
            }
        }
        self.get_long()
    }

    #[inline(never)]
    fn get_long(&mut self) -> Option<u64> {
        // With 8 bytes at hand, a value of up to 8 bytes (56 bits: every
        // time, id and address in practice) is decoded without a loop:
        // find the first byte without the high bit, keep the bytes up to
        // it, and squeeze out the continuation bits.
        if let Some(word) = self.buf.get(self.pos..self.pos + 8) {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let stops = !w & 0x8080_8080_8080_8080;
            if stops != 0 {
                let len = stops.trailing_zeros() / 8 + 1;
                let keep = if len == 8 {
                    u64::MAX
                } else {
                    (1u64 << (8 * len)) - 1
                };
                let x = w & keep & 0x7f7f_7f7f_7f7f_7f7f;
                let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
                let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
                let x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
                self.pos += len as usize;
                return Some(x);
            }
        }
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            if shift == 63 && b > 1 {
                return None;
            }
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    #[inline]
    pub(crate) fn get_signed(&mut self) -> Option<i64> {
        let v = self.get()?;
        Some(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A number that must fit in `u32`.
    #[inline]
    pub(crate) fn get_u32(&mut self) -> Option<u32> {
        u32::try_from(self.get()?).ok()
    }

    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    #[inline]
    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.get()?).ok()?;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_edges() {
        let values = [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ];
        let signed = [0i64, -1, 1, -64, 64, i64::MIN, i64::MAX];
        let mut buf = Vec::new();
        for &v in &values {
            put(&mut buf, v);
        }
        for &v in &signed {
            put_signed(&mut buf, v);
        }
        let mut c = Cursor::new(&buf);
        for &v in &values {
            assert_eq!(c.get(), Some(v));
        }
        for &v in &signed {
            assert_eq!(c.get_signed(), Some(v));
        }
        assert!(c.is_empty());
        assert_eq!(c.get(), None);
    }

    #[test]
    fn every_length_decodes_with_and_without_slack() {
        for bits in 0..64 {
            for v in [1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) | 0x55] {
                let mut buf = Vec::new();
                put(&mut buf, v);
                let n = buf.len();
                // Alone (the loop), then followed by other bytes (the
                // 8-byte word path).
                let mut c = Cursor::new(&buf);
                assert_eq!((c.get(), c.pos), (Some(v), n), "{v:#x} alone");
                buf.extend_from_slice(&[0xff; 9]);
                let mut c = Cursor::new(&buf);
                assert_eq!((c.get(), c.pos), (Some(v), n), "{v:#x} with slack");
            }
        }
    }

    #[test]
    fn rejects_overlong() {
        let buf = [0xffu8; 11];
        assert_eq!(Cursor::new(&buf).get(), None);
        let buf = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(Cursor::new(&buf).get(), None);
    }
}
