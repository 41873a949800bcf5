//! Frames: the unit of writing, checksumming, compression and recovery.
//!
//! A trace is a 16-byte file header followed by frames. Each frame is a
//! 32-byte header and a payload; the header's CRC-32C covers the header and
//! the stored payload, so a torn or damaged frame is always detected and a
//! reader can stop (or `recover` can resynchronise on the next magic).

use crate::error::{Error, ErrorKind, Result};

/// Magic at the start of every trace file.
pub const FILE_MAGIC: [u8; 8] = *b"REANIMTR";
/// Size of the file header: magic, major, minor, reserved.
pub const FILE_HEADER_LEN: usize = 16;
/// Magic at the start of every frame.
pub const FRAME_MAGIC: [u8; 4] = *b"RFRM";
/// Size of a frame header.
pub const FRAME_HEADER_LEN: usize = 32;
/// Largest payload a reader accepts (stored or raw), so a damaged length
/// can never make it allocate without bound.
pub const MAX_PAYLOAD: u32 = 64 << 20;

/// Frame kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// JSON [`TraceMeta`](crate::TraceMeta); always frame 0.
    Meta,
    /// A batch of records.
    Records,
    /// A batch of buffer contents (blobs) that records refer to.
    Blobs,
    /// JSON [`EndSummary`](crate::EndSummary); the last frame of a finished
    /// trace.
    End,
    /// A kind from a later minor version.
    Unknown(u8),
}

impl FrameKind {
    /// The byte stored in the header.
    pub fn code(self) -> u8 {
        match self {
            FrameKind::Meta => 1,
            FrameKind::Records => 2,
            FrameKind::Blobs => 3,
            FrameKind::End => 4,
            FrameKind::Unknown(c) => c,
        }
    }

    fn from_code(c: u8) -> Self {
        match c {
            1 => FrameKind::Meta,
            2 => FrameKind::Records,
            3 => FrameKind::Blobs,
            4 => FrameKind::End,
            c => FrameKind::Unknown(c),
        }
    }
}

/// Payload codecs.
pub const CODEC_NONE: u8 = 0;
/// zstd-compressed payload.
pub const CODEC_ZSTD: u8 = 1;
/// Header flag: a reader that does not know this frame kind may skip it.
pub const FLAG_SKIPPABLE: u16 = 1;

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// What the payload holds.
    pub kind: FrameKind,
    /// How the payload is stored.
    pub codec: u8,
    /// Flag bits ([`FLAG_SKIPPABLE`]).
    pub flags: u16,
    /// Bytes of payload in the file.
    pub stored_len: u32,
    /// Bytes of payload once decompressed.
    pub raw_len: u32,
    /// Frame number: 0 for the meta frame, then +1 per frame in file order.
    pub number: u64,
    /// Records (or blobs) in the payload.
    pub count: u32,
    /// CRC-32C of header bytes 0..28 and the stored payload.
    pub crc: u32,
}

impl FrameHeader {
    /// Encodes the header; `crc` must already cover the payload.
    pub fn encode(&self) -> [u8; FRAME_HEADER_LEN] {
        let mut h = [0u8; FRAME_HEADER_LEN];
        h[0..4].copy_from_slice(&FRAME_MAGIC);
        h[4] = self.kind.code();
        h[5] = self.codec;
        h[6..8].copy_from_slice(&self.flags.to_le_bytes());
        h[8..12].copy_from_slice(&self.stored_len.to_le_bytes());
        h[12..16].copy_from_slice(&self.raw_len.to_le_bytes());
        h[16..24].copy_from_slice(&self.number.to_le_bytes());
        h[24..28].copy_from_slice(&self.count.to_le_bytes());
        h[28..32].copy_from_slice(&self.crc.to_le_bytes());
        h
    }

    /// Computes the CRC over the first 28 header bytes and the payload.
    pub fn checksum(&self, payload: &[u8]) -> u32 {
        let h = self.encode();
        crc32c::crc32c_append(crc32c::crc32c(&h[..28]), payload)
    }

    /// Decodes and sanity-checks a header (the CRC is checked later, once
    /// the payload is read).
    pub fn decode(h: &[u8; FRAME_HEADER_LEN]) -> Result<Self> {
        if h[0..4] != FRAME_MAGIC {
            return Err(Error::corrupt("bad frame magic"));
        }
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let header = FrameHeader {
            kind: FrameKind::from_code(h[4]),
            codec: h[5],
            flags: u16::from_le_bytes([h[6], h[7]]),
            stored_len: u32_at(8),
            raw_len: u32_at(12),
            number: u64::from_le_bytes(h[16..24].try_into().expect("8 bytes")),
            count: u32_at(24),
            crc: u32_at(28),
        };
        if header.stored_len > MAX_PAYLOAD || header.raw_len > MAX_PAYLOAD {
            return Err(Error::corrupt(format!(
                "frame payload of {} bytes exceeds the {} byte limit",
                header.stored_len.max(header.raw_len),
                MAX_PAYLOAD
            )));
        }
        if header.codec == CODEC_NONE && header.stored_len != header.raw_len {
            return Err(Error::corrupt("uncompressed frame with differing lengths"));
        }
        if header.codec > CODEC_ZSTD {
            return Err(Error::corrupt(format!("unknown codec {}", header.codec)));
        }
        Ok(header)
    }

    /// Decompresses a stored payload into `out` (cleared first), checking
    /// that it has exactly `raw_len` bytes.
    pub fn unpack(
        &self,
        stored: &[u8],
        out: &mut Vec<u8>,
        zstd: &mut zstd::bulk::Decompressor<'_>,
    ) -> Result<()> {
        out.clear();
        match self.codec {
            CODEC_NONE => out.extend_from_slice(stored),
            _ => {
                out.reserve(self.raw_len as usize);
                zstd.decompress_to_buffer(stored, out).map_err(|e| {
                    Error::corrupt(format!("zstd payload does not decompress: {e}"))
                })?;
            }
        }
        if out.len() != self.raw_len as usize {
            return Err(Error::corrupt(format!(
                "payload decompressed to {} bytes, header says {}",
                out.len(),
                self.raw_len
            )));
        }
        Ok(())
    }
}

/// Encodes the file header for `major.minor`.
pub fn file_header(major: u16, minor: u16) -> [u8; FILE_HEADER_LEN] {
    let mut h = [0u8; FILE_HEADER_LEN];
    h[0..8].copy_from_slice(&FILE_MAGIC);
    h[8..10].copy_from_slice(&major.to_le_bytes());
    h[10..12].copy_from_slice(&minor.to_le_bytes());
    h
}

/// Checks a file header and returns its version.
pub fn check_file_header(h: &[u8]) -> Result<(u16, u16)> {
    if h.is_empty() {
        return Err(Error::new(ErrorKind::Empty));
    }
    if h.len() < FILE_HEADER_LEN || h[0..8] != FILE_MAGIC {
        // Cut short inside the header: the magic so far is right.
        let magic_so_far = &h[..h.len().min(FILE_MAGIC.len())];
        if h.len() < FILE_HEADER_LEN && FILE_MAGIC.starts_with(magic_so_far) {
            return Err(Error::new(ErrorKind::Truncated).at(0, None));
        }
        return Err(Error::new(ErrorKind::NotATrace).at(0, None));
    }
    let major = u16::from_le_bytes([h[8], h[9]]);
    let minor = u16::from_le_bytes([h[10], h[11]]);
    if major > crate::FORMAT_MAJOR {
        return Err(Error::new(ErrorKind::NewerVersion { major, minor }).at(8, None));
    }
    if major < crate::FORMAT_MAJOR {
        return Err(
            Error::corrupt(format!("trace format {major}.{minor} is not supported")).at(8, None),
        );
    }
    Ok((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file cut inside its header is truncated if what is there is
    /// right, foreign otherwise (a cut after the magic read "bad magic").
    #[test]
    fn a_header_cut_short_is_truncated_not_foreign() {
        let h = file_header(crate::FORMAT_MAJOR, 0);
        for n in 1..FILE_HEADER_LEN {
            let e = check_file_header(&h[..n]).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Truncated), "{n}: {e}");
        }
        let e = check_file_header(b"#!/bin/sh\n").unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::NotATrace), "{e}");
        assert!(check_file_header(&h).is_ok());
    }
}
