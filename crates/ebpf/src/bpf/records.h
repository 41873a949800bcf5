/* What the kernel side hands the recorder through the ring buffer.
 *
 * Every ring record starts with `struct rec_head`; its `type` says which
 * struct follows. The Rust consumer (src/records.rs) reads the same
 * layout: change both together. All fields are little-endian x86_64
 * natural alignment; every struct is a multiple of 8 bytes.
 */
#ifndef REANIMATOR_RECORDS_H
#define REANIMATOR_RECORDS_H

enum rec_type {
	REC_CALL = 1,    /* a system call, at its exit (or unfinished)    */
	REC_CAPTURE = 2, /* one chunk of user memory a call named          */
	REC_FORK = 3,    /* a task created by a traced one                 */
	REC_EXEC = 4,    /* a successful execve                            */
	REC_EXIT = 5,    /* a traced task ended                            */
	REC_SIGNAL = 6,  /* a signal delivered to a traced task            */
	REC_SPILL = 7,   /* the rest of a capture, left for the recorder   */
};

struct rec_head {
	__u32 type;
	__u32 tid;
	__u64 seq;     /* global sequence id (for captures: the call's)   */
	__u64 time_ns; /* CLOCK_MONOTONIC (for calls: entry time)          */
};

/* flags of rec_call */
#define CALL_RETURNED 1 /* exit_ns and ret are valid                   */

struct rec_call {
	struct rec_head h;
	__u32 tgid;
	__u32 nr;
	__u64 args[6];
	__u64 exit_ns;
	__s64 ret;
	__u32 flags;
	__u32 pad;
};

/* flags of rec_capture */
#define CAP_EXIT 1       /* read at syscall exit (else at entry)        */
#define CAP_FAILED 2     /* the memory could not be read: bytes stop here */
#define CAP_STRING 4     /* a NUL-terminated string; `present` is its max */
#define CAP_UNTERMINATED 8 /* string: no NUL within the maximum         */
#define CAP_RETRY 16     /* continues a capture after a failed chunk    */
#define CAP_RUN 32       /* mapped range: a run of readable pages from
                          * page `elem`; its length is what arrives     */
#define CAP_WHOLE 64     /* read whatever the data policy (io_uring's
                          * SQEs and CQEs): short of `present` means
                          * truncated, never skipped                    */

/* One chunk of one capture: `size` bytes that were at `offset` of the
 * capture follow this header. A capture is the chunks with the same
 * (seq, arg, elem, exit flag) in offset order; its last chunk has
 * offset + size == want, or CAP_FAILED. An input unreadable at entry is
 * sent again at exit: the later capture replaces the earlier. */
struct rec_capture {
	struct rec_head h;
	__u8 arg;
	__u8 flags;
	__u16 pad;
	__u32 elem;
	__u64 len;     /* the length the size rule gives                   */
	__u64 present; /* bytes that exist there (output iovecs: moved)    */
	__u64 want;    /* bytes the policy keeps (<= present)              */
	__u64 offset;
	__u64 size;
};

/* The ring had no room for the rest of a capture (one call's buffer can
 * be larger than the ring): bytes [offset, want) of the capture, at user
 * address addr + offset, are read by the recorder with process_vm_readv
 * once the thread has stopped on its way back from the call (the kernel
 * side sends it SIGSTOP; h.time_ns is the time just before). Fields as
 * in rec_capture. */
struct rec_spill {
	struct rec_head h;
	__u8 arg;
	__u8 flags;
	__u16 pad;
	__u32 elem;
	__u64 len;
	__u64 present;
	__u64 want;
	__u64 offset;
	__u64 addr;
};

struct rec_fork {
	struct rec_head h; /* tid: the child */
	__u32 tgid;
	__u32 ppid;
	__u32 parent_tid;
	__u32 uid, gid, euid, egid;
	__u32 umask;
	__u32 own_mm; /* a new address space, not the parent's (fork, not vfork or a thread) */
};

struct rec_exec {
	struct rec_head h; /* tid: the id after exec */
	__u32 tgid;
	__u32 old_tid;
};

struct rec_exit {
	struct rec_head h;
	__u32 tgid;
	__u32 code; /* as wait(2) encodes it */
};

struct rec_signal {
	struct rec_head h;
	__u32 tgid;
	__s32 signo;
	__s32 code;
	__u32 sender;
};

/* The capture rule of one parameter, from the catalogue (src/spec.rs). */
enum spec_kind {
	K_NONE = 0,
	K_PATH = 1,
	K_STR = 2,
	K_STR_ARRAY = 3,
	K_BUF = 4,
	K_STRUCT = 5,
	K_IOVEC = 6,
	K_MSGHDR = 7,
	K_MAPPED = 8,
	K_IOCBS = 9,     /* Linux AIO requests (io_submit)      */
	K_IOEVENTS = 10, /* Linux AIO completions (io_getevents) */
	K_URING_SUBMIT = 11,   /* io_uring requests, from the ring (io_uring_enter entry) */
	K_URING_COMPLETE = 12, /* io_uring completions, from the ring (io_uring_enter exit) */
};
#define DIR_IN 1
#define DIR_OUT 2
enum spec_len { L_ARG = 0, L_RET = 1, L_FIXED = 2, L_ARGPTR = 3, L_ARG_TIMES = 4 };

struct param_spec {
	__u8 kind;
	__u8 dir;
	__u8 len_kind;
	__u8 len_arg; /* L_ARG/L_ARGPTR/L_ARG_TIMES: argument index; iovec, iocbs: count index; mapped: length index */
	__u32 fixed;  /* L_FIXED: bytes; L_ARG_TIMES: bytes of one item */
};

/* call_spec.flags: the call replaces the address space (execve), so an
 * input that could not be read at entry cannot be read again at exit. */
#define SPEC_NEW_IMAGE 1
/* call_spec.flags: the call ends the address space if it succeeds
 * (exit_group, execve), so the stores still in shared file mappings are
 * captured at its entry, as mapped_at_exit pseudo-calls. */
#define SPEC_ENDS_SPACE 2
/* call_spec.flags: what the io_uring follower watches at a successful
 * exit: the call sets up a ring whose descriptor it returns and whose
 * layout its second argument receives (io_uring_setup), maps part of the
 * ring of its fifth argument (mmap), closes its first argument (close). */
#define SPEC_URING_SETUP 4
#define SPEC_MAPS 8
#define SPEC_CLOSES 16

struct call_spec {
	struct param_spec p[6];
	__u32 flags;
};

/* Counters the consumer reads (one per CPU). */
struct counters {
	__u64 ring_full;       /* records that did not fit: events lost       */
	__u64 no_storage;      /* calls whose entry could not be kept: lost   */
	__u64 stops;           /* back-pressure stops requested               */
	__u64 before_attach;   /* exits of calls entered before tracing began */
	__u64 untracked;       /* processes forked while `traced` was full    */
	__u64 maps_unlisted;   /* exits and execs whose mappings could not be
	                        * listed (address space lock busy): not
	                        * mappings known to be lost                 */
	__u64 uring_unkept;    /* io_uring reads the table had no room for:
	                        * their data captures are missing            */
	__u64 reflex_stops;    /* wrappers that stopped with their child,
	                        * continued with it                          */
	__u64 refused;         /* of before_attach, those that did not return
	                        * a restart code: refused by a seccomp filter
	                        * before the entry tracepoint                */
};

#endif
