/*!
File-system state for replay.

A trace replays into an empty directory only if the files the program found
when it was recorded are there again, and a replay is only proven faithful
if the files it leaves behind match the ones the program left. This crate
holds both halves and the confinement they share:

- [`Root`]: a directory every path resolves inside (`openat2` with
  `RESOLVE_IN_ROOT`), used by the replayer for every path a trace names, and
  by recorders as the host's `/`.
- [`join`], [`is_pseudo`]: how traces name paths, identical in recorders
  and the replayer.
- [`path_state`], [`compare`]: one path's state (kind, mode, owner, size,
  link target, xattrs, content hash; never times) and the differences
  between two.
- [`Snapshotter`]: what recorders call at each path-taking syscall entry to
  record the state of paths the trace touches for the first time, and at
  the end to write the manifest.
- [`Preparer`]: builds a replay root from those recorded states.
- [`Owners`], [`Viewer`]: which owners a replay reproduces, and the access
  a replay that is not root keeps in other users' paths instead.
*/

mod owners;
mod paths;
mod prepare;
mod root;
mod snapshot;
mod state;

pub use owners::{Owners, Viewer};
pub use paths::{first_component, is_pseudo, join, join_as_called, lexical, reopened_at_start};
pub use prepare::{restore_recorded_modes, KeptAccess, PrepareReport, Preparer};
pub use root::{cstring, fd_path, host_name, is_removed, open_in, Root};
pub use snapshot::{Need, SnapshotPolicy, Snapshotter};
pub use state::{after_state_like, compare, path_state, unsummed_after_state};
