/*!
File-system state for replay.

A trace replays into an empty directory only if the files the program found
when it was recorded are there again, and a replay is only proven faithful
if the files it leaves behind match the ones the program left. This crate
holds both halves and the confinement they share:

- [`Root`]: a directory every path resolves inside (`openat2` with
  `RESOLVE_IN_ROOT`), used by the replayer for every path a trace names, and
  by recorders as the host's `/`.
*/

mod root;

pub use root::{cstring, fd_path, Root};
