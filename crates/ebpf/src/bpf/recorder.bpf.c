// SPDX-License-Identifier: (MIT OR GPL-2.0)
/* The kernel side of the eBPF recorder.
 *
 * sys_enter keeps the call's number, arguments, entry time and sequence id
 * in task storage and reads the call's input memory; sys_exit reads its
 * output memory and emits the call. Which memory a call names comes from
 * the `specs` map, filled by the recorder from the syscall catalogue: this
 * program knows no system call by name. Every record goes to one ring
 * buffer as a variable-size dynptr record; the user buffers are copied
 * straight into it. Records that do not fit are counted, never dropped
 * silently, and a process that outruns the consumer is stopped (SIGSTOP)
 * until the consumer has drained the ring.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "records.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PATH_MAX_LEN 4096
#define STR_MAX_LEN (128 << 10)
#define STR_ARRAY_MAX (1 << 16)
#define IOV_MAX_LEN 1024
#define LEN_PTR_MAX (64 << 10)
#define ITEMS_MAX (1 << 16) /* Len::ArgTimes: at most this many items */
#define CAPTURE_MAX (256ULL << 20)
#define CHUNK (256 << 10)
#define NR_MAX 512
/* Only chunks this large are spilled: a spilled input is read after the
 * call, and parameters the kernel both reads and writes (ioctl and
 * sockopt structs, poll and select sets) are all smaller. */
#define SPILL_MIN (128 << 10)

/* Linux AIO, as the catalogue's `aio` lays it out: the array of requests
 * or events is elem 0, and request or event i owns the elems from
 * (i + 1) << AIO_SHIFT: its iocb at + 0, its data at + 1, + 2, ... */
#define AIO_SHIFT 11
#define AIO_MAX (1 << 16)
#define IOCB_LEN 64
#define IO_EVENT_LEN 32
#define AIO_PREAD 0
#define AIO_PWRITE 1
#define AIO_PREADV 7
#define AIO_PWRITEV 8

/* A message's control data: its capture elem and most bytes taken
 * (reanimator_trace::CONTROL_ELEM, CONTROL_MAX). */
#define CONTROL_ELEM 0xffffffffu
#define CONTROL_MAX 4096

#define SIGSTOP_NR 19
#define SIGKILL_NR 9
/* signal_struct's SIGNAL_GROUP_EXIT, and signal_generate's result for a
 * signal queued to its target (TRACE_SIGNAL_DELIVERED). */
#define SIGNAL_GROUP_EXIT_FLAG 0x4
#define TRACE_SIGNAL_DELIVERED_CODE 0
#define SIGCONT_NR 18
#define SIGTTOU_NR 22
#define SIGCHLD_NR 17
#define CLD_EXITED_CODE 1
#define CLD_DUMPED_CODE 3
#define CLD_STOPPED_CODE 5
#define CLD_CONTINUED_CODE 6
/* signal_generate's result: queued, or dropped as one was pending. */
#define SIGNAL_QUEUED 0
#define SIGNAL_ALREADY_PENDING 2
#define SI_KERNEL_CODE 0x80
#define SI_USER_CODE 0
#define SI_TKILL_CODE (-6)
/* signal_generate's info for a signal the kernel sends with no siginfo of
 * its own to give (SEND_SIG_PRIV; SEND_SIG_NOINFO is NULL). */
#define SEND_SIG_PRIV_INFO ((struct kernel_siginfo *)1)
/* How long after a child's back-pressure stop its parent's own stop is
 * taken for the wrapper's reflex (see `on_signal_generate`). */
#define REFLEX_WINDOW_NS (2ULL * 1000 * 1000 * 1000)
#define VM_WRITE_FLAG 0x2
#define VM_SHARED_FLAG 0x8
#define MNT_INTERNAL_FLAG 0x4000
/* task_struct.flags: an io_uring worker (io-wq, SQPOLL), a kernel thread
 * of the process's thread group that makes no system call and that ptrace
 * cannot trace. It starts with no fork tracepoint; its signals and end are
 * not the program's. */
#define PF_IO_WORKER_FLAG 0x10

/* Set by the recorder before loading. */
const volatile __u64 data_max = CAPTURE_MAX; /* bytes kept per data buffer */
const volatile __u64 high_water = 1 << 20;   /* ring bytes that stop a process */
const volatile __u64 spill_at = 3 << 19;     /* ring bytes past which data is spilled */

/* The next sequence id; the recorder takes ids from it too. */
__u64 next_seq = 1;
/* Bumped at every back-pressure stop, so the recorder knows to look. */
__u64 stop_requests = 0;
/* Child exits whose SIGCHLD was dropped because the parent still had one
 * pending from a back-pressure stop or resume (`on_sigchld`), and the
 * last such parent and child, for the recorder to name. */
__u64 masked_exits = 0;
__u32 masked_parent = 0;
__u32 masked_child = 0;
char masked_child_comm[16] = {};
/* Spills so far; bumped before the spilling thread is sent SIGSTOP. */
__u64 spills = 0;
/* Set by the recorder when it stops following (detach): a task's call
 * storage, which marks it as traced, outlives that. */
__u32 detached = 0;

extern int bpf_probe_read_user_dynptr(struct bpf_dynptr *dptr, __u32 off, __u32 size,
				      const void *unsafe_ptr__ign) __ksym;
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;

/* The catalogue's number for the mapped_at_exit pseudo-call. */
const volatile __u32 mapped_at_exit_nr = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 << 20); /* set by the recorder */
} rb SEC(".maps");

/* Processes (thread group ids) being recorded. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

/* When each traced process was last sent SIGCONT (by anyone): a spill
 * whose stop went out before that may have been cancelled. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} continued SEC(".maps");

/* Processes stopped for back-pressure, until the recorder resumes them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u8);
} stopped SEC(".maps");

/* When a child of each traced process was last stopped for back-pressure
 * (or stopped itself with its own child), by the parent's tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} child_stopped SEC(".maps");

/* The si_code of the last SIGCHLD queued to each traced process: while
 * one is pending, it is the one pending. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __s32);
} last_sigchld SEC(".maps");

/* A process whose leader thread ended before its other threads: the
 * leader's exit record waits for the process's end, as the parent's wait
 * (and ptrace) sees it. Whichever of the leader and the last thread out
 * comes second emits it; the first leaves its mark here (`leader_gone`). */
#define LAST_THREAD_GONE 0xffffffffu
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u32);
} leader_gone SEC(".maps");

/* Processes whose shared file mappings the recorder captured itself while
 * the gate held their exit_group (from /proc, able to wait for room in the
 * ring, which this program is not): none are emitted here from then on. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u8);
} maps_taken SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NR_MAX);
	__type(key, __u32);
	__type(value, struct call_spec);
} specs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct counters);
} counts SEC(".maps");

/* io_uring, as the catalogue's `uring` lays it out (the elems of Linux
 * AIO): io_uring_enter's elem 0 holds, at entry, the SQEs the kernel is
 * about to take, at exit the CQEs posted since the last look; request or
 * completion i owns the elems from (i + 1) << AIO_SHIFT (a write's data
 * or a READV's element lengths at entry, a read's data at exit). No call
 * argument points at the rings: each ring is followed per (process,
 * descriptor) from io_uring_setup's exit (its layout) and the mmap exits
 * on its descriptor (where each part is), as crates/ptrace/src/uring.rs
 * does. */
#define URING_MAX (1 << 16)
#define SQE_LEN 64
#define CQE_LEN 16
#define URING_PARAMS_LEN 120
#define URING_OFF_SQ_RING 0ULL
#define URING_OFF_CQ_RING 0x8000000ULL
#define URING_OFF_SQES 0x10000000ULL
#define URING_SETUP_SQPOLL (1U << 1)
#define URING_SETUP_SQE128 (1U << 10)
#define URING_SETUP_CQE32 (1U << 11)
#define URING_SETUP_NO_SQARRAY (1U << 16)
#define URING_FEAT_SINGLE_MMAP 1U
#define URING_ENTER_REGISTERED_RING (1ULL << 4)
#define URING_SQE_BUFFER_SELECT (1U << 5)
#define URING_OP_READV 1
#define URING_OP_WRITEV 2
#define URING_OP_READ_FIXED 4
#define URING_OP_WRITE_FIXED 5
#define URING_OP_READ 22
#define URING_OP_WRITE 23
/* uring.mapped: the parts of the ring the program has mapped */
#define MAPPED_SQ_RING 1
#define MAPPED_CQ_RING 2
#define MAPPED_SQES 4

struct uring_key {
	__u32 tgid;
	__s32 fd;
};

/* What the recorder knows of one ring: the fields of io_uring_params
 * that locate its parts, and where the program mapped them. */
struct uring {
	__u64 id; /* unique, never reused: keys the ring's remembered reads */
	__u64 sq_ring;
	__u64 cq_ring;
	__u64 sqes;
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 flags;    /* IORING_SETUP_* */
	__u32 features; /* IORING_FEAT_* */
	__u32 sq_head;  /* sq_off.head, .tail, .array: offsets in the SQ ring */
	__u32 sq_tail;
	__u32 sq_array;
	__u32 cq_head; /* cq_off.head, .tail, .cqes: offsets in the CQ ring */
	__u32 cq_tail;
	__u32 cqes;
	__u32 cq_seen; /* the CQ tail up to which completions were captured */
	__u32 reads;   /* reads were remembered: forgetting the ring sweeps them */
	__u32 mapped;  /* MAPPED_* */
	__u32 pad;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct uring_key);
	__type(value, struct uring);
} urings SEC(".maps");

/* Processes that set up (or inherited) a ring: only those are looked at
 * when a process forks, execs or ends. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u8);
} uring_procs SEC(".maps");

/* Reads in flight: part `part` of the memory the read with `user_data`
 * on ring `ring` fills, from its submission to its completion. Part 0
 * also says how many parts there are (a READV's iovec elements, as the
 * array was at submission: the program may reuse it once submitted). */
struct uring_read_key {
	__u64 ring;
	__u64 user_data;
	__u32 part;
	__u32 pad;
};
struct uring_read {
	__u64 base;
	__u64 len;
	__u32 parts;
	__u32 tgid;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct uring_read_key);
	__type(value, struct uring_read);
} uring_reads SEC(".maps");

/* While a process forks: the id its child's copy of each ring takes. */
struct uring_fork_key {
	__u64 ring;
	__u32 child;
	__u32 pad;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct uring_fork_key);
	__type(value, __u64);
} uring_forks SEC(".maps");

/* The last ring id given. */
__u64 uring_ids = 0;

/* One string buffer per CPU (a per-CPU array value cannot be this large). */
struct scratch {
	char buf[STR_MAX_LEN + 8];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized to the CPU count */
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* The call a task is inside, from sys_enter to sys_exit. */
struct inflight {
	__u64 seq;
	__u64 enter_ns;
	__u64 args[6];
	__u32 nr;
	__u32 tid;
	__u32 tgid;
	__u32 active;
	__u32 retry; /* inputs unreadable at entry, read again at exit */
	__u32 forked; /* a new task, about to return from its parent's fork */
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} calls SEC(".maps");

static __always_inline struct counters *counters(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&counts, &zero);
}

static __always_inline bool is_traced(__u32 tgid)
{
	return bpf_map_lookup_elem(&traced, &tgid) != NULL;
}

/* The current task's call storage if it is traced, created on its first
 * call. A task that has storage is traced (storage is only created for a
 * traced process, here or when a traced process forks, and dies with its
 * task), so the `traced` hash is asked once per task, not at every entry
 * and exit. */
static __always_inline struct inflight *traced_task(__u32 tgid, bool create)
{
	if (detached)
		return NULL;
	struct task_struct *task = bpf_get_current_task_btf();
	struct inflight *f = bpf_task_storage_get(&calls, task, 0, 0);
	if (f || !create || !is_traced(tgid))
		return f;
	f = bpf_task_storage_get(&calls, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!f) {
		struct counters *k = counters();
		if (k)
			k->no_storage++;
	}
	return f;
}

/* A record that did not fit: counted, never silent. */
static __always_inline void count_ring_full(void)
{
	struct counters *k = counters();
	if (k)
		k->ring_full++;
}

/* A fixed-size record, or NULL (counted) when the ring is full. */
static __always_inline void *reserve_record(__u64 size)
{
	void *r = bpf_ringbuf_reserve(&rb, size, 0);
	if (!r)
		count_ring_full();
	return r;
}

/* A variable-size record; false (counted) when the ring is full. */
static __always_inline bool reserve_dynptr(struct bpf_dynptr *d, __u32 size)
{
	if (!bpf_ringbuf_reserve_dynptr(&rb, size, 0, d))
		return true;
	bpf_ringbuf_discard_dynptr(d, 0);
	count_ring_full();
	return false;
}

/* Publishes a stopped process for the recorder to resume; false if it
 * was published already (the recorder has yet to resume it, and will).
 * Its parent is told, in case it stops too (`on_signal_generate`). */
static __always_inline bool publish_stop(__u32 tgid)
{
	/* Told at every stop, published or not: each stop the child takes
	 * tells the parent, which may stop in turn. */
	__u32 parent = BPF_CORE_READ(bpf_get_current_task_btf(), real_parent, tgid);
	if (is_traced(parent)) {
		__u64 now = bpf_ktime_get_ns();
		bpf_map_update_elem(&child_stopped, &parent, &now, BPF_ANY);
	}
	__u8 one = 1;
	if (bpf_map_update_elem(&stopped, &tgid, &one, BPF_NOEXIST))
		return false;
	__sync_fetch_and_add(&stop_requests, 1);
	return true;
}

/* Stops the current process until the recorder resumes it: when the ring
 * is filling faster than the recorder drains it (throttle), or after a
 * spill. The signal goes out before the process is published in
 * `stopped`, so the recorder never resumes a stop it has not seen.
 *
 * It goes to the calling thread, which takes it on its way back from this
 * very call and so stops the whole group at once. Sent to the process, it
 * would wait in the shared queue for whichever thread the kernel picks,
 * possibly one not running for milliseconds, while the others go on
 * writing past the headroom.
 *
 * It goes out again at every call while the ring stays above the mark,
 * even for a process already published: the recorder's SIGCONT for an
 * earlier stop may have cancelled it (the recorder unpublishes, then
 * continues; a stop sent in between was continued at once). */
static __always_inline void stop_process(__u32 tgid)
{
	if (bpf_send_signal_thread(SIGSTOP_NR))
		return;
	if (!publish_stop(tgid))
		return;
	struct counters *c = counters();
	if (c)
		c->stops++;
}

static __always_inline void throttle(__u32 tgid)
{
	if (bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) >= high_water)
		stop_process(tgid);
}

/* What one capture is; also the bpf_loop context that emits it. */
struct cap {
	__u64 seq;
	__u64 addr;
	__u64 len;
	__u64 present;
	__u64 want;
	__u32 tid;
	__u32 elem;
	__u64 failed_at; /* offset of the chunk that could not be read */
	__u8 arg;
	__u8 flags;
	__u8 failed; /* set by the chunk that could not be read */
	__u8 pad;
};

/* Writes the header of one chunk of capture `c` at the start of `d`. */
static __always_inline void write_capture_head(struct bpf_dynptr *d, struct cap *c, __u8 flags,
					       __u64 off, __u32 n)
{
	struct rec_capture h = {
		.h = { .type = REC_CAPTURE, .tid = c->tid, .seq = c->seq },
		.arg = c->arg,
		.flags = flags,
		.elem = c->elem,
		.len = c->len,
		.present = c->present,
		.want = c->want,
		.offset = off,
		.size = n,
	};
	bpf_dynptr_write(d, 0, &h, sizeof(h), 0);
}

/* Leaves bytes [off, want) of capture `c` to the recorder: the ring is
 * too full for them (the rest of the ring stays free for smaller records).
 * The thread is stopped on its way back from this call, with the buffer
 * as the call left it, and the recorder reads it there. */
static __always_inline void spill(struct cap *c, __u64 off)
{
	struct rec_spill *r = reserve_record(sizeof(*r));
	if (!r)
		return;
	r->h.type = REC_SPILL;
	r->h.tid = c->tid;
	r->h.seq = c->seq;
	r->h.time_ns = bpf_ktime_get_ns(); /* before the stop is sent */
	r->arg = c->arg;
	r->flags = c->flags;
	r->pad = 0;
	r->elem = c->elem;
	r->len = c->len;
	r->present = c->present;
	r->want = c->want;
	r->offset = off;
	r->addr = c->addr;
	__sync_fetch_and_add(&spills, 1);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	stop_process(bpf_get_current_pid_tgid() >> 32);
}

/* Chunk i of a capture. The offset is derived from the index and never
 * written back, and a failure only sets a flag (bpf_loop's count says
 * which chunk it was): the verifier then sees the same state at every
 * iteration and checks the callback twice, not hundreds of times. */
static long chunk_cb(__u64 i, struct cap *c)
{
	__u32 step = CHUNK;
	__u64 off = i * step;
	if (i && off >= c->want)
		return 1;
	__u64 left = c->want - off;
	__u32 n = left > step ? step : left;
	if (n >= SPILL_MIN &&
	    bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) + sizeof(struct rec_capture) + n > spill_at) {
		spill(c, off);
		return 1;
	}
	struct bpf_dynptr d;
	if (!reserve_dynptr(&d, sizeof(struct rec_capture) + n))
		return 1;
	long failed = n && bpf_probe_read_user_dynptr(&d, sizeof(struct rec_capture), n,
						     (void *)(c->addr + off));
	if (failed)
		c->failed = 1;
	write_capture_head(&d, c, failed ? c->flags | CAP_FAILED : c->flags, off, failed ? 0 : n);
	bpf_ringbuf_submit_dynptr(&d, BPF_RB_NO_WAKEUP);
	return failed ? 1 : 0;
}

/* After a chunk failed: its readable part, one page at a time up to the
 * first page that cannot be read (a buffer running into unmapped memory
 * keeps its readable bytes, as with process_vm_readv). */
static long page_cb(__u64 i, struct cap *c)
{
	__u64 start = c->failed_at;
	__u64 first_page = (c->addr + start) & ~4095ULL;
	__u64 off = i ? first_page + i * 4096 - c->addr : start;
	if (off >= c->want)
		return 1;
	__u64 page_end = first_page + (i + 1) * 4096 - c->addr;
	__u64 left = (page_end < c->want ? page_end : c->want) - off;
	__u32 n = left > 4096 ? 4096 : left;
	struct bpf_dynptr d;
	if (!reserve_dynptr(&d, sizeof(struct rec_capture) + n))
		return 1;
	if (!n || bpf_probe_read_user_dynptr(&d, sizeof(struct rec_capture), n,
					     (void *)(c->addr + off))) {
		bpf_ringbuf_discard_dynptr(&d, 0);
		return 1;
	}
	write_capture_head(&d, c, c->flags | CAP_FAILED | CAP_RETRY, off, n);
	bpf_ringbuf_submit_dynptr(&d, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Emits a data capture in chunks of at most CHUNK bytes. */
__noinline int emit_data(struct cap *in)
{
	if (!in)
		return 0;
	struct cap c = *in; /* bpf_loop wants its context on this stack */
	if (c.want > CAPTURE_MAX)
		c.want = CAPTURE_MAX;
	__u32 step = CHUNK;
	__u32 chunks = c.want ? (c.want + step - 1) / step : 1;
	c.failed = 0;
	long done = bpf_loop(chunks, chunk_cb, &c, 0);
	if (!c.failed || done < 1)
		return 0;
	c.failed_at = (__u64)(done - 1) * step;
	bpf_loop(step / 4096 + 1, page_cb, &c, 0);
	return 1;
}

/* A mapped range (munmap, msync), page by page. A page the process
 * never touched is not resident and cannot be read here, but it cannot
 * hold a store either: it is skipped, and the readable pages around it
 * go out as runs, each a capture whose `elem` is its first page. */
struct runs {
	struct cap c;
	__u64 run_off; /* offset of the current run's first page */
	__u8 in_run;
};

static long run_cb(__u64 i, struct runs *r)
{
	__u64 off = i * 4096;
	if (off >= r->c.want)
		return 1;
	__u64 left = r->c.want - off;
	__u32 n = left > 4096 ? 4096 : left;
	/* Asked before reserving: a discarded reservation keeps its ring
	 * space until the recorder reads past it, so reserving for every
	 * page of a large mapping most of which the process never touched
	 * (LMDB maps its whole 64 MiB map size) filled the ring with
	 * nothing and lost records. */
	char probe;
	if (bpf_probe_read_user(&probe, 1, (void *)(r->c.addr + off))) {
		r->in_run = 0;
		return 0;
	}
	struct bpf_dynptr d;
	if (!reserve_dynptr(&d, sizeof(struct rec_capture) + n))
		return 1;
	if (bpf_probe_read_user_dynptr(&d, sizeof(struct rec_capture), n,
				       (void *)(r->c.addr + off))) {
		bpf_ringbuf_discard_dynptr(&d, 0);
		r->in_run = 0;
		return 0;
	}
	if (!r->in_run) {
		r->in_run = 1;
		r->run_off = off;
		r->c.elem = i;
	}
	write_capture_head(&d, &r->c, r->c.flags | CAP_RUN, off - r->run_off, n);
	bpf_ringbuf_submit_dynptr(&d, BPF_RB_NO_WAKEUP);
	return 0;
}

__noinline int emit_runs(struct cap *in)
{
	if (!in)
		return 0;
	struct runs r = { .c = *in }; /* bpf_loop wants its context on this stack */
	if (r.c.want > CAPTURE_MAX)
		r.c.want = CAPTURE_MAX;
	bpf_loop((r.c.want + 4095) / 4096, run_cb, &r, 0);
	return 0;
}

/* A shared writable mapping whose stores reach a file: not anonymous
 * shared memory or SysV shm, which the kernel backs with files on its
 * internal shmem mount (fio's 16 MiB job segments). Memfds live there
 * too, but a program reads them back and copies them to files. */
static __always_inline bool stores_reach_a_file(struct vm_area_struct *vma)
{
	if ((vma->vm_flags & (VM_SHARED_FLAG | VM_WRITE_FLAG)) != (VM_SHARED_FLAG | VM_WRITE_FLAG))
		return false;
	/* Pointer fields in these rare paths are read with BPF_CORE_READ: a
	 * direct load makes the verifier search the kernel's BTF by name for
	 * the field's trust rules, which took 6 of on_enter's 21 ms of
	 * loading. */
	struct file *f = BPF_CORE_READ(vma, vm_file);
	if (!f)
		return false;
	if (!(BPF_CORE_READ(f, f_path.mnt, mnt_flags) & MNT_INTERNAL_FLAG))
		return true;
	char name[8] = {};
	bpf_probe_read_kernel(name, 6, BPF_CORE_READ(f, f_path.dentry, d_name.name));
	return name[0] == 'm' && name[1] == 'e' && name[2] == 'm' && name[3] == 'f' &&
	       name[4] == 'd' && name[5] == ':';
}

/* One mapped_at_exit pseudo-call: [start, start + len) of a mapping,
 * its bytes as runs, then its record. */
static __noinline int emit_mapped_piece(__u32 tgid, __u32 tid, __u64 start, __u64 len)
{
	__u64 now = bpf_ktime_get_ns();
	struct cap c = {
		.seq = __sync_fetch_and_add(&next_seq, 1),
		.addr = start,
		.len = len,
		.present = len,
		.want = len < data_max ? len : data_max,
		.tid = tid,
	};
	emit_runs(&c);
	struct rec_call *r = reserve_record(sizeof(*r));
	if (!r)
		return 0;
	r->h.type = REC_CALL;
	r->h.tid = tid;
	r->h.seq = c.seq;
	r->h.time_ns = now;
	r->tgid = tgid;
	r->nr = mapped_at_exit_nr;
	r->args[0] = start;
	r->args[1] = len;
	for (int i = 2; i < 6; i++)
		r->args[i] = 0;
	r->exit_ns = now;
	r->ret = 0;
	r->flags = CALL_RETURNED;
	r->pad = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* A mapping larger than a capture's bound goes out as several pseudo-calls
 * of at most CAPTURE_MAX bytes each, so none of its stores is cut off (as
 * the ptrace recorder does). */
struct pieces {
	__u32 tgid;
	__u32 tid;
	__u64 start;
	__u64 end;
};

static long piece_cb(__u64 i, struct pieces *p)
{
	__u64 at = p->start + i * CAPTURE_MAX;
	if (at >= p->end)
		return 1;
	__u64 left = p->end - at;
	emit_mapped_piece(p->tgid, p->tid, at, left < CAPTURE_MAX ? left : CAPTURE_MAX);
	return 0;
}

/* Before a call that ends the address space (exit_group, execve): each
 * shared writable file mapping still there becomes mapped_at_exit
 * pseudo-calls holding its bytes (the stores since its last msync, which
 * reach the file with no call), recorded before the call itself. */
static __noinline int emit_mapped_at_exit(__u32 tgid, __u32 tid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	/* A vfork child borrows its parent's address space, which outlives
	 * the child's exec or exit: nothing ends (and a spawn from a program
	 * with a large mapping would copy it whole each time). */
	if (BPF_CORE_READ(task, vfork_done) || bpf_map_lookup_elem(&maps_taken, &tgid))
		return 0;
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	if (bpf_iter_task_vma_new(&it, task, 0)) {
		/* The address space lock was taken: counted, never silent. */
		struct counters *k = counters();
		if (k)
			k->maps_unlisted++;
	}
	while ((vma = bpf_iter_task_vma_next(&it))) {
		if (!stores_reach_a_file(vma))
			continue;
		struct pieces p = {
			.tgid = tgid,
			.tid = tid,
			.start = vma->vm_start,
			.end = vma->vm_end,
		};
		bpf_loop((p.end - p.start + CAPTURE_MAX - 1) / CAPTURE_MAX, piece_cb, &p, 0);
	}
	bpf_iter_task_vma_destroy(&it);
	return 0;
}

/* Emits a NUL-terminated string of at most `max` bytes; returns what
 * bpf_probe_read_user_str did (the bytes read with the NUL, or < 0). */
__noinline long emit_string_read(struct cap *c, __u32 max)
{
	if (!c)
		return 0;
	__u32 cpu = bpf_get_smp_processor_id();
	struct scratch *s = bpf_map_lookup_elem(&scratch, &cpu);
	if (!s)
		return 0;
	if (max > STR_MAX_LEN)
		max = STR_MAX_LEN;
	long r = bpf_probe_read_user_str(s->buf, max + 1, (void *)c->addr);
	__u8 flags = c->flags | CAP_STRING;
	__u32 n;
	if (r <= 0) {
		flags |= CAP_FAILED;
		n = 0;
	} else if (r > max) {
		flags |= CAP_UNTERMINATED;
		n = max;
	} else {
		n = r - 1;
	}
	if (n > STR_MAX_LEN)
		n = STR_MAX_LEN;
	struct bpf_dynptr d;
	if (!reserve_dynptr(&d, sizeof(struct rec_capture) + n))
		return 0;
	struct cap str = *c;
	str.len = str.present = str.want = n;
	write_capture_head(&d, &str, flags, 0, n);
	if (n)
		bpf_dynptr_write(&d, sizeof(struct rec_capture), s->buf, n, 0);
	bpf_ringbuf_submit_dynptr(&d, BPF_RB_NO_WAKEUP);
	return r;
}

/* Emits a NUL-terminated string of at most `max` bytes; returns whether
 * it could not be read. */
static __always_inline int emit_string(struct cap *c, __u32 max)
{
	return emit_string_read(c, max) <= 0;
}

/* argv/envp: each element a string capture. */
struct strs {
	struct cap c;
	__u64 base;
	__u8 failed; /* an element, or the array, could not be read */
};

static long str_cb(__u64 i, struct strs *s)
{
	__u64 p = 0;
	if (bpf_probe_read_user(&p, sizeof(p), (void *)(s->base + i * 8))) {
		s->failed = 1;
		return 1;
	}
	if (!p)
		return 1;
	s->c.addr = p;
	s->c.elem = i;
	if (emit_string(&s->c, STR_MAX_LEN))
		s->failed = 1;
	return 0;
}

/* The strings an exec copied into the new image, one after another from
 * `at` to `end` (its argv or its environment). */
struct image_strs {
	struct cap c;
	__u64 at;
	__u64 end;
};

static long image_str_cb(__u64 i, struct image_strs *s)
{
	if (s->at >= s->end)
		return 1;
	s->c.addr = s->at;
	s->c.elem = i;
	long n = emit_string_read(&s->c, STR_MAX_LEN);
	if (n <= 0)
		return 1;
	s->at += n;
	return 0;
}

/* An iovec array: whole elements (inputs at entry), or `left` bytes spread
 * over the elements in order (outputs at exit: the return value). Element
 * i is capture elem first + i. */
struct iovs {
	struct cap c;
	__u64 base;
	__u64 left;
	__u32 first;
	__u8 spread;
	__u8 failed; /* an element, or the array, could not be read */
};

static long iov_cb(__u64 i, struct iovs *v)
{
	__u64 iov[2];
	if (bpf_probe_read_user(iov, sizeof(iov), (void *)(v->base + i * 16))) {
		v->failed = 1;
		return 1;
	}
	__u64 present = iov[1];
	if (v->spread) {
		present = iov[1] < v->left ? iov[1] : v->left;
		v->left -= present;
	}
	v->c.addr = iov[0];
	v->c.elem = v->first + i;
	v->c.len = iov[1];
	v->c.present = present;
	v->c.want = present < data_max ? present : data_max;
	if (emit_data(&v->c))
		v->failed = 1;
	return 0;
}

/* The elements are numbered from c->elem. Returns whether something could
 * not be read (inputs are then read again at exit, every element: a
 * buffer in a page the program never touched, say). */
__noinline int emit_iovecs(struct cap *c, __u64 base, __u64 count, __u64 left, int spread)
{
	if (!c)
		return 0;
	struct iovs v = { .c = *c, .base = base, .left = left, .first = c->elem, .spread = spread };
	if (count > IOV_MAX_LEN)
		count = IOV_MAX_LEN;
	bpf_loop(count, iov_cb, &v, 0);
	return v.failed;
}

/* The fields of a struct iocb its data depends on (from offset 16). */
struct iocb_op {
	__u16 opcode;
	__s16 reqprio;
	__u32 fildes;
	__u64 buf;
	__u64 nbytes;
};

/* Linux AIO requests (io_submit) or completions (io_getevents): the
 * bpf_loop context that walks the array at `base`. */
struct aio_walk {
	struct cap c;
	__u64 base;
	__u32 failed; /* something could not be read (io_submit: read again at exit) */
};

/* The data of the request whose iocb is `op`, as capture elems c->elem + 1
 * on: one buffer, or an iovec array's elements, of which `moved` bytes
 * are there, spread over them in order. */
static __always_inline int emit_aio_data(struct cap *c, struct iocb_op *op, __u64 moved)
{
	c->elem += 1;
	if (op->opcode == AIO_PREADV || op->opcode == AIO_PWRITEV)
		return emit_iovecs(c, op->buf, op->nbytes, moved, 1);
	c->addr = op->buf;
	c->len = op->nbytes;
	c->present = moved < op->nbytes ? moved : op->nbytes;
	c->want = c->present < data_max ? c->present : data_max;
	return emit_data(c);
}

/* Request i: its iocb, always whole, the data of a write, and the element
 * lengths of a vectored read (no bytes yet: replay needs them to submit
 * it). */
static long request_cb(__u64 i, struct aio_walk *w)
{
	__u64 at = 0;
	if (bpf_probe_read_user(&at, sizeof(at), (void *)(w->base + i * 8)))
		return 1;
	__u32 elem = (i + 1) << AIO_SHIFT;
	w->c.addr = at;
	w->c.elem = elem;
	w->c.len = w->c.present = w->c.want = IOCB_LEN;
	struct iocb_op op;
	if (emit_data(&w->c) || bpf_probe_read_user(&op, sizeof(op), (void *)(at + 16))) {
		w->failed = 1;
		return 0;
	}
	if (op.opcode == AIO_PWRITE || op.opcode == AIO_PWRITEV)
		w->failed |= emit_aio_data(&w->c, &op, ~0ULL);
	else if (op.opcode == AIO_PREADV)
		emit_aio_data(&w->c, &op, 0);
	return 0;
}

/* Event i: the data a completed read brought in, found through the
 * program's iocb (not captured: its io_submit has it). */
static long event_cb(__u64 i, struct aio_walk *w)
{
	/* struct io_event: data, obj (the iocb's address), res. */
	__u64 ev[3];
	if (bpf_probe_read_user(ev, sizeof(ev), (void *)(w->base + i * IO_EVENT_LEN)))
		return 1;
	__s64 res = ev[2];
	if (res <= 0)
		return 0;
	__u64 cb[IOCB_LEN / 8];
	w->c.elem = (i + 1) << AIO_SHIFT;
	if (bpf_probe_read_user(cb, sizeof(cb), (void *)ev[1])) {
		struct cap c = w->c;
		c.flags |= CAP_FAILED;
		c.addr = 0;
		c.len = IOCB_LEN;
		c.present = c.want = 0;
		emit_data(&c);
		return 0;
	}
	struct iocb_op *op = (struct iocb_op *)&cb[2];
	if (op->opcode == AIO_PREAD || op->opcode == AIO_PREADV)
		emit_aio_data(&w->c, op, res);
	return 0;
}

/* io_submit's n requests (entry) or io_getevents' n events (exit): the
 * array itself, always whole, then each request or event. Returns
 * whether something could not be read. */
__noinline int emit_aio(struct cap *c, __u64 n)
{
	if (!c || !n)
		return 0;
	bool exit = c->flags & CAP_EXIT;
	if (n > AIO_MAX)
		n = AIO_MAX;
	struct aio_walk w = { .c = *c, .base = c->addr };
	w.c.len = w.c.present = w.c.want = n * (exit ? IO_EVENT_LEN : 8);
	w.failed = emit_data(&w.c);
	if (exit)
		bpf_loop(n, event_cb, &w, 0);
	else
		bpf_loop(n, request_cb, &w, 0);
	return w.failed;
}

/* Whether the mapping at an address is a shared writable file mapping,
 * and where it ends. */
struct vma_probe {
	__u64 shared;
	__u64 end;
};

static int vma_cb(struct task_struct *task, struct vm_area_struct *vma, struct vma_probe *v)
{
	v->shared = stores_reach_a_file(vma);
	v->end = vma->vm_end;
	return 0;
}

/* Whether [addr, addr+len) overlaps a shared writable file mapping (the
 * first few mappings of the range are looked at: munmap and msync name
 * one mapping, which mprotect may have split). */
static __always_inline bool overlaps_shared(__u64 addr, __u64 len)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 at = addr;
	for (int i = 0; i < 4 && at < addr + len; i++) {
		struct vma_probe v = {};
		if (bpf_find_vma(task, at, vma_cb, &v, 0) || !v.end)
			return false;
		if (v.shared)
			return true;
		at = v.end;
	}
	return false;
}

/* One pass over a call's parameters: the entry pass (exit == 0) reads
 * inputs, the exit pass outputs, only after success. */
struct pass {
	struct call_spec spec;
	__u64 args[6];
	__u64 seq;
	__s64 ret;
	__u32 tid;
	__u8 exit;
	__u8 ok;
};

static __always_inline __u64 arg_of(struct pass *p, __u32 i)
{
	return i < 6 ? p->args[i] : 0;
}

/* After a successful exec, the string array parameter i (the `which`th of
 * the call's: argv, then the environment) read again from the new image,
 * where the kernel copied its strings: the old address space, whose
 * pages the program never touched, is gone. */
__noinline int emit_image_strings(struct pass *p, __u32 i, __u32 which)
{
	if (!p)
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct image_strs s = {
		.c = { .seq = p->seq, .tid = p->tid, .arg = i },
		.at = which ? BPF_CORE_READ(task, mm, env_start) : BPF_CORE_READ(task, mm, arg_start),
		.end = which ? BPF_CORE_READ(task, mm, env_end) : BPF_CORE_READ(task, mm, arg_end),
	};
	bpf_loop(STR_ARRAY_MAX, image_str_cb, &s, 0);
	return 0;
}

__noinline int capture_param(struct pass *p, __u32 i)
{
	if (!p || i >= 6)
		return 0;
	struct param_spec ps = p->spec.p[i];
	__u64 addr = p->args[i];
	if (ps.kind == K_NONE || !addr)
		return 0;
	struct cap c = {
		.seq = p->seq,
		.addr = addr,
		.tid = p->tid,
		.arg = i,
		.flags = p->exit ? CAP_EXIT : 0,
	};
	if (!p->exit) {
		switch (ps.kind) {
		case K_PATH:
			return emit_string(&c, PATH_MAX_LEN);
		case K_STR:
			return emit_string(&c, STR_MAX_LEN);
		case K_STR_ARRAY: {
			struct strs s = { .c = c, .base = addr };
			bpf_loop(STR_ARRAY_MAX, str_cb, &s, 0);
			return s.failed;
		}
		case K_MAPPED: {
			__u64 n = arg_of(p, ps.len_arg);
			if (!overlaps_shared(addr, n))
				return 0;
			c.len = c.present = n;
			c.want = n < data_max ? n : data_max;
			return emit_runs(&c);
		}
		}
	}
	int reads = p->exit ? (ps.dir & DIR_OUT) && p->ok : ps.dir & DIR_IN;
	if (!reads)
		return 0;
	__u64 n = 0;
	if (ps.kind == K_BUF || ps.kind == K_STRUCT) {
		switch (ps.len_kind) {
		case L_ARG:
			n = arg_of(p, ps.len_arg);
			break;
		case L_RET:
			if (!p->exit)
				return 0;
			n = p->ret > 0 ? p->ret : 0;
			break;
		case L_FIXED:
			n = ps.fixed;
			break;
		case L_ARG_TIMES: {
			/* A count of items of `fixed` bytes (a group list). */
			__u64 items = arg_of(p, ps.len_arg);
			n = (items < ITEMS_MAX ? items : ITEMS_MAX) * ps.fixed;
			break;
		}
		case L_ARGPTR: {
			__u64 at = arg_of(p, ps.len_arg);
			__u32 v = 0;
			if (!at || bpf_probe_read_user(&v, sizeof(v), (void *)at))
				return 0;
			n = v < LEN_PTR_MAX ? v : LEN_PTR_MAX;
			break;
		}
		}
		c.len = c.present = n;
		c.want = ps.kind == K_STRUCT ? n : (n < data_max ? n : data_max);
		return emit_data(&c);
	}
	__u64 left = p->exit && p->ret > 0 ? p->ret : 0;
	if (ps.kind == K_IOVEC) {
		return emit_iovecs(&c, addr, arg_of(p, ps.len_arg), left, p->exit);
	} else if (ps.kind == K_MSGHDR) {
		/* struct msghdr: msg_iov at offset 16, msg_iovlen at 24,
		 * msg_control at 32, msg_controllen at 40 (at exit, what the
		 * kernel filled). */
		__u64 hdr[6];
		if (bpf_probe_read_user(hdr, sizeof(hdr), (void *)addr)) {
			c.len = 56;
			c.flags |= CAP_FAILED;
			c.addr = 0;
			c.want = 0;
			emit_data(&c);
			return 1;
		}
		int failed = emit_iovecs(&c, hdr[2], hdr[3], left, p->exit);
		if (hdr[4] && hdr[5]) {
			c.addr = hdr[4];
			c.elem = CONTROL_ELEM;
			c.len = c.present = hdr[5];
			c.want = hdr[5] < CONTROL_MAX ? hdr[5] : CONTROL_MAX;
			failed |= emit_data(&c);
		}
		return failed;
	} else if (ps.kind == K_IOCBS) {
		__s64 nr = arg_of(p, ps.len_arg);
		return emit_aio(&c, nr > 0 ? nr : 0);
	} else if (ps.kind == K_IOEVENTS) {
		return emit_aio(&c, left);
	}
	return 0;
}

/* A read that could not be remembered (its table is full): its data
 * capture will be missing. */
static __always_inline void count_unkept(void)
{
	struct counters *k = counters();
	if (k)
		k->uring_unkept++;
}

/* io_uring_enter's walk over the ring: elem 0, the `count` SQEs or CQEs
 * read from the ring in chunks of at most CHUNK bytes, then each request
 * or completion. Also the bpf_loop context of both. */
struct ring_walk {
	struct cap c;
	__u64 table;      /* the SQE array, or the CQ ring's CQE array */
	__u64 index;      /* the SQ ring's index array (0: none) */
	__u64 ring;       /* the ring's id */
	__u32 tgid;
	__u32 first;      /* ring position of item 0 */
	__u32 mask;
	__u32 stride;     /* bytes of one item in the ring */
	__u32 size;       /* bytes captured of one item */
	__u32 per;        /* items per chunk */
	__u32 count;      /* items in elem 0 */
	__u32 got;        /* items read */
	__u32 consumed;   /* completions: the first ones, the program has taken them */
	/* Requests: a read was remembered. A flag, not a count: the verifier
	 * checks a bpf_loop callback until its state stops changing. */
	__u32 remembered;
};

/* Where item i of the walk is; 0 if its index cannot be read. */
static __always_inline __u64 ring_item(struct ring_walk *w, __u32 i)
{
	__u32 slot = (w->first + i) & w->mask;
	if (w->index) {
		__u32 s = 0;
		if (bpf_probe_read_user(&s, sizeof(s), (void *)(w->index + 4 * (__u64)slot)))
			return 0;
		slot = s & w->mask;
	}
	return w->table + (__u64)slot * w->stride;
}

/* The parts of a remembered read, each captured (the `left` bytes the
 * read brought in, spread over the `parts` parts in order, as capture
 * elems `elem` on, of the call `c` is a capture of) and forgotten. Also
 * the bpf_loop context. */
struct read_parts {
	struct cap c;
	struct uring_read_key k;
	__u64 left;
	__u32 elem;
	__u32 parts;
};

static long read_part_cb(__u64 j, struct read_parts *r)
{
	r->k.part = j;
	struct uring_read *v = bpf_map_lookup_elem(&uring_reads, &r->k);
	if (!v)
		return 0;
	/* (Part 0 of a READV whose iovec array could not be read has no
	 * memory: it only says so.) */
	if (j < r->parts) {
		__u64 len = v->len;
		__u64 present = len < r->left ? len : r->left;
		r->left -= present;
		r->c.addr = v->base;
		r->c.elem = r->elem + j;
		r->c.len = len;
		r->c.present = present;
		r->c.want = present < data_max ? present : data_max;
		emit_data(&r->c);
	}
	bpf_map_delete_elem(&uring_reads, &r->k);
	return 0;
}

/* Takes (captures, and forgets) the read with the key's user_data, if
 * one is remembered. A function of its own, which the
 * verifier checks once: inlined into the walks, whose callbacks it checks
 * over and over, it made loading the recorder take a tenth of a second. */
__noinline int take_read(struct read_parts *in)
{
	if (!in)
		return 0;
	struct read_parts r = *in; /* bpf_loop wants its context on this stack */
	r.k.part = 0;
	struct uring_read *v = bpf_map_lookup_elem(&uring_reads, &r.k);
	if (!v)
		return 0;
	__u32 parts = v->parts;
	if (parts > IOV_MAX_LEN)
		parts = IOV_MAX_LEN;
	r.parts = parts;
	bpf_loop(parts ? parts : 1, read_part_cb, &r, 0);
	return 0;
}

/* Forgetting parts of a read: the bpf_loop context. */
struct forget {
	struct uring_read_key k;
	__u32 from;
	__u32 pad;
};

static long forget_part_cb(__u64 j, struct forget *f)
{
	f->k.part = f->from + j;
	bpf_map_delete_elem(&uring_reads, &f->k);
	return 0;
}

/* Forgets parts [from, from + n) of a read (n == 0: all its parts). A
 * function of its own for the reason take_read is; it captures nothing,
 * so the walk over the ring that calls it stays within the verifier's
 * eight nested calls. */
__noinline int forget_parts(struct uring_read_key *key, __u32 from, __u32 n)
{
	if (!key)
		return 0;
	struct forget f = { .k = *key, .from = from };
	if (!n) {
		f.k.part = 0;
		struct uring_read *v = bpf_map_lookup_elem(&uring_reads, &f.k);
		if (!v)
			return 0;
		n = v->parts ? v->parts : 1;
	}
	bpf_loop(n < IOV_MAX_LEN ? n : IOV_MAX_LEN, forget_part_cb, &f, 0);
	return 0;
}

/* One chunk of elem 0 being filled. */
struct ring_chunk {
	struct bpf_dynptr d;
	struct ring_walk *w;
	__u32 from; /* the chunk's first item */
	__u32 done; /* items read into it */
	__u32 failed;
	__u32 pad;
};

/* Item from + k, read into the chunk. A completion the program has taken
 * already forgets its read: the program may have reused the buffer. */
static long ring_item_cb(__u64 k, struct ring_chunk *ch)
{
	struct ring_walk *w = ch->w;
	__u32 i = ch->from + k;
	__u64 at = ring_item(w, i);
	__u32 size = w->size == SQE_LEN ? SQE_LEN : CQE_LEN;
	__u32 off = sizeof(struct rec_capture) + k * size;
	if (!at || bpf_probe_read_user_dynptr(&ch->d, off, size, (void *)at)) {
		ch->failed = 1;
		return 1;
	}
	ch->done = k + 1;
	if (i < w->consumed) {
		struct uring_read_key key = { .ring = w->ring };
		if (!bpf_dynptr_read(&key.user_data, sizeof(key.user_data), &ch->d, off, 0))
			forget_parts(&key, 0, 0);
	}
	return 0;
}

static long ring_chunk_cb(__u64 n, struct ring_walk *w)
{
	__u32 from = n * w->per;
	if (n && from >= w->count)
		return 1;
	__u32 k = w->count - from;
	if (k > w->per)
		k = w->per;
	struct ring_chunk ch = { .w = w, .from = from };
	__u32 size = w->size == SQE_LEN ? SQE_LEN : CQE_LEN;
	if (!reserve_dynptr(&ch.d, sizeof(struct rec_capture) + k * size))
		return 1;
	bpf_loop(k, ring_item_cb, &ch, 0);
	__u8 flags = w->c.flags | CAP_WHOLE | (ch.failed ? CAP_FAILED : 0);
	write_capture_head(&ch.d, &w->c, flags, (__u64)from * size, ch.done * size);
	bpf_ringbuf_submit_dynptr(&ch.d, BPF_RB_NO_WAKEUP);
	w->got = from + ch.done;
	return ch.failed;
}

/* Elem 0: the walk's items, in chunks; returns how many were read. A
 * function of its own for the reason take_read is. */
__noinline int read_ring(struct ring_walk *in)
{
	if (!in)
		return 0;
	struct ring_walk w = *in; /* bpf_loop wants its context on this stack */
	w.per = CHUNK / w.size;
	bpf_loop(w.count ? (w.count + w.per - 1) / w.per : 1, ring_chunk_cb, &w, 0);
	return w.got;
}

/* A read being remembered at its submission, by request `c` is the
 * capture of. */
struct remember {
	struct cap c;
	struct uring_read_key k;
	struct uring_read v;
	__u64 iovs;  /* a READV's iovec array */
	__u32 elem;  /* the capture elem of its first element */
	__u32 parts; /* parts remembered */
};

/* Element j of a READV: remembered, and its length captured with no
 * bytes (replay needs it to submit the read). */
static long readv_part_cb(__u64 j, struct remember *r)
{
	__u64 iov[2];
	if (bpf_probe_read_user(iov, sizeof(iov), (void *)(r->iovs + j * 16)))
		return 1;
	r->k.part = j;
	r->v.base = iov[0];
	r->v.len = iov[1];
	if (bpf_map_update_elem(&uring_reads, &r->k, &r->v, BPF_ANY))
		count_unkept();
	r->parts = j + 1;
	r->c.addr = iov[0];
	r->c.elem = r->elem + j;
	r->c.len = iov[1];
	r->c.present = r->c.want = 0;
	emit_data(&r->c);
	return 0;
}

/* Remembers where a read's data will land (one buffer at iovs, or the
 * `len` elements of a READV's array there, as they are now). A function
 * of its own for the reason take_read is. */
__noinline int remember_read(struct remember *in, __u32 len, __u32 vectored)
{
	if (!in)
		return 0;
	struct remember r = *in; /* bpf_loop wants its context on this stack */
	r.parts = 0;
	/* A read still remembered under the same user_data is replaced. */
	__u32 old = 0;
	r.k.part = 0;
	struct uring_read *o = bpf_map_lookup_elem(&uring_reads, &r.k);
	if (o)
		old = o->parts;
	if (vectored) {
		bpf_loop(len < IOV_MAX_LEN ? len : IOV_MAX_LEN, readv_part_cb, &r, 0);
	} else {
		r.v.base = r.iovs;
		r.v.len = len;
		r.v.parts = 1;
		if (bpf_map_update_elem(&uring_reads, &r.k, &r.v, BPF_ANY))
			count_unkept();
		r.parts = 1;
	}
	/* Part 0 says how many there are (none: an iovec array that could
	 * not be read, remembered all the same, as ptrace does). */
	r.k.part = 0;
	struct uring_read *v = r.parts ? bpf_map_lookup_elem(&uring_reads, &r.k) : NULL;
	if (v) {
		v->parts = r.parts;
	} else if (!r.parts) {
		r.v.base = r.v.len = 0;
		r.v.parts = 0;
		if (bpf_map_update_elem(&uring_reads, &r.k, &r.v, BPF_ANY))
			count_unkept();
	}
	__u32 from = r.parts ? r.parts : 1;
	if (old > from)
		forget_parts(&r.k, from, old - from);
	return 0;
}

/* Request i: a write's data, at elems (i + 1) << AIO_SHIFT | 1 on; a
 * read's memory is remembered for its completion. */
static long sqe_cb(__u64 i, struct ring_walk *w)
{
	__u64 at = ring_item(w, i);
	/* opcode, flags, ioprio, fd; off; addr; len, op flags; user_data */
	__u64 s[5];
	if (!at || bpf_probe_read_user(s, sizeof(s), (void *)at))
		return 1;
	__u8 op = s[0];
	__u8 fl = s[0] >> 8;
	__u64 addr = s[2];
	__u32 len = s[3];
	if (fl & URING_SQE_BUFFER_SELECT)
		return 0;
	bool vectored = op == URING_OP_READV || op == URING_OP_WRITEV;
	w->c.elem = ((i + 1) << AIO_SHIFT) | 1;
	if (op == URING_OP_WRITE || op == URING_OP_WRITEV || op == URING_OP_WRITE_FIXED) {
		if (vectored) {
			emit_iovecs(&w->c, addr, len, 0, 0);
		} else {
			w->c.addr = addr;
			w->c.len = w->c.present = len;
			w->c.want = len < data_max ? len : data_max;
			emit_data(&w->c);
		}
	} else if (op == URING_OP_READ || op == URING_OP_READV || op == URING_OP_READ_FIXED) {
		struct remember r = {
			.c = w->c,
			.k = { .ring = w->ring, .user_data = s[4] },
			.v = { .tgid = w->tgid },
			.iovs = addr,
			.elem = w->c.elem,
		};
		remember_read(&r, len, vectored);
		w->remembered = 1;
	}
	return 0;
}

/* Completion consumed + n, which the program has not taken yet: the data
 * its read brought in, at elems (k + 1) << AIO_SHIFT | 1 on. Read again
 * from the ring, which the kernel does not write over before the program
 * takes it. */
static long cqe_cb(__u64 n, struct ring_walk *w)
{
	__u32 k = w->consumed + n;
	__u64 at = ring_item(w, k);
	/* user_data; res, flags */
	__u64 cqe[2];
	if (!at || bpf_probe_read_user(cqe, sizeof(cqe), (void *)at))
		return 1;
	__s32 res = cqe[1];
	struct read_parts r = {
		.c = w->c,
		.k = { .ring = w->ring, .user_data = cqe[0] },
		.left = res > 0 ? res : 0,
		.elem = ((k + 1) << AIO_SHIFT) | 1,
	};
	/* A read that brought nothing in has nothing to capture. */
	if (res > 0)
		take_read(&r);
	else
		forget_parts(&r.k, 0, 0);
	return 0;
}

/* The ring io_uring_enter's descriptor names (parameter i's capture
 * starts in `w`), or NULL after one empty unreadable capture: a ring the
 * recorder cannot read (polled by the kernel, registered, set up before
 * the recording, not mapped). */
static __always_inline struct uring *enter_ring(struct pass *p, __u32 i, struct ring_walk *w)
{
	w->c.seq = p->seq;
	w->c.tid = p->tid;
	w->c.arg = i;
	w->c.flags = p->exit ? CAP_EXIT : 0;
	w->tgid = bpf_get_current_pid_tgid() >> 32;
	struct uring *r = NULL;
	if (!(p->args[3] & URING_ENTER_REGISTERED_RING)) {
		struct uring_key key = { .tgid = w->tgid, .fd = p->args[0] };
		r = bpf_map_lookup_elem(&urings, &key);
	}
	if (r)
		w->ring = r->id;
	return r;
}

static __always_inline void uring_unseen(struct cap *c)
{
	c->flags |= CAP_FAILED;
	c->addr = 0;
	c->len = c->present = c->want = 0;
	emit_data(c);
}

/* io_uring_enter's requests (at entry: parameter i is to_submit), read
 * from the ring of its descriptor. Nothing is read again at exit: the
 * kernel has taken them by then. */
__noinline int emit_uring_submit(struct pass *p, __u32 i)
{
	if (!p || i >= 6)
		return 0;
	struct ring_walk w = {};
	struct uring *r = enter_ring(p, i, &w);
	__u32 head = 0, tail = 0;
	__u32 parts = MAPPED_SQ_RING | MAPPED_SQES;
	if (!r || (r->flags & URING_SETUP_SQPOLL) || (r->mapped & parts) != parts ||
	    bpf_probe_read_user(&head, sizeof(head), (void *)(r->sq_ring + r->sq_head)) ||
	    bpf_probe_read_user(&tail, sizeof(tail), (void *)(r->sq_ring + r->sq_tail))) {
		uring_unseen(&w.c);
		return 0;
	}
	__u64 n = p->args[i] < URING_MAX ? p->args[i] : URING_MAX;
	__u64 count = tail - head;
	if (count > n)
		count = n;
	if (count > r->sq_entries)
		count = r->sq_entries;
	w.table = r->sqes;
	w.index = r->flags & URING_SETUP_NO_SQARRAY ? 0 : r->sq_ring + r->sq_array;
	w.first = head;
	w.mask = r->sq_entries - 1;
	w.stride = r->flags & URING_SETUP_SQE128 ? 128 : 64;
	w.size = SQE_LEN;
	w.count = count;
	w.c.len = w.c.present = w.c.want = count * SQE_LEN;
	w.got = read_ring(&w);
	bpf_loop(w.got, sqe_cb, &w, 0);
	if (w.remembered)
		r->reads = 1;
	return 0;
}

/* io_uring_enter's completions (at exit: parameter i is min_complete):
 * those posted since the last look at this ring, by any thread, each
 * claimed by one call. */
__noinline int emit_uring_complete(struct pass *p, __u32 i)
{
	if (!p || i >= 6)
		return 0;
	struct ring_walk w = {};
	struct uring *r = enter_ring(p, i, &w);
	__u32 head = 0, tail = 0;
	if (!r || !(r->mapped & MAPPED_CQ_RING) ||
	    bpf_probe_read_user(&head, sizeof(head), (void *)(r->cq_ring + r->cq_head)) ||
	    bpf_probe_read_user(&tail, sizeof(tail), (void *)(r->cq_ring + r->cq_tail))) {
		uring_unseen(&w.c);
		return 0;
	}
	__u32 seen = 0;
	int tries = 0;
	for (; tries < 8; tries++) {
		seen = r->cq_seen;
		if ((__s32)(tail - seen) <= 0)
			return 0;
		if (__sync_val_compare_and_swap(&r->cq_seen, seen, tail) == seen)
			break;
	}
	if (tries == 8)
		return 0;
	__u32 posted = tail - seen;
	/* Older ones than a ring's worth have been written over. */
	__u32 kept = posted < r->cq_entries ? posted : r->cq_entries;
	if (kept > URING_MAX)
		kept = URING_MAX;
	w.first = tail - kept;
	__s32 taken = head - w.first;
	w.consumed = taken <= 0 ? 0 : ((__u32)taken < kept ? (__u32)taken : kept);
	w.table = r->cq_ring + r->cqes;
	w.mask = r->cq_entries - 1;
	w.stride = r->flags & URING_SETUP_CQE32 ? 32 : 16;
	w.size = CQE_LEN;
	w.count = kept;
	w.c.len = w.c.present = (__u64)posted * CQE_LEN;
	w.c.want = (__u64)kept * CQE_LEN;
	w.got = read_ring(&w);
	if (w.got > w.consumed)
		bpf_loop(w.got - w.consumed, cqe_cb, &w, 0);
	return 0;
}

/* Forgetting rings and their reads: the bpf_for_each_map_elem context. */
struct sweep {
	__u64 ring;  /* reads of this ring, */
	__u32 tgid;  /* or rings and reads of this process */
	__u32 reads; /* a ring forgotten had reads remembered */
};

static long sweep_read_cb(struct bpf_map *map, struct uring_read_key *k, struct uring_read *v,
			  struct sweep *s)
{
	if (s->ring ? k->ring == s->ring : v->tgid == s->tgid)
		bpf_map_delete_elem(&uring_reads, k);
	return 0;
}

static long sweep_ring_cb(struct bpf_map *map, struct uring_key *k, struct uring *v,
			  struct sweep *s)
{
	if (k->tgid != s->tgid)
		return 0;
	if (v->reads)
		s->reads = 1;
	bpf_map_delete_elem(&urings, k);
	return 0;
}

/* Forgets the ring `key` (closed, or replaced) and its reads. */
static __always_inline void drop_ring(struct uring_key *key)
{
	struct uring *r = bpf_map_lookup_elem(&urings, key);
	if (!r)
		return;
	struct sweep s = { .ring = r->id };
	bool reads = r->reads;
	bpf_map_delete_elem(&urings, key);
	if (reads)
		bpf_for_each_map_elem(&uring_reads, sweep_read_cb, &s, 0);
}

/* The process's address space is gone (exec, or its end): its rings and
 * their reads are forgotten. */
__noinline int uring_forget(__u32 tgid)
{
	if (!bpf_map_lookup_elem(&uring_procs, &tgid))
		return 0;
	struct sweep s = { .tgid = tgid };
	bpf_for_each_map_elem(&urings, sweep_ring_cb, &s, 0);
	if (s.reads)
		bpf_for_each_map_elem(&uring_reads, sweep_read_cb, &s, 0);
	bpf_map_delete_elem(&uring_procs, &tgid);
	return 0;
}

/* A child made by fork has its parent's descriptors and mappings: it
 * gets a copy of each of its parent's rings, under a new id, with a copy
 * of each read remembered (both may see its completion, as both see the
 * ring). */
struct inherit {
	__u32 parent;
	__u32 child;
	__u32 reads;
	__u32 pad;
};

static long inherit_ring_cb(struct bpf_map *map, struct uring_key *k, struct uring *v,
			    struct inherit *in)
{
	if (k->tgid != in->parent)
		return 0;
	struct uring r = *v;
	r.id = __sync_fetch_and_add(&uring_ids, 1) + 1;
	struct uring_key ck = { .tgid = in->child, .fd = k->fd };
	if (bpf_map_update_elem(&urings, &ck, &r, BPF_ANY) || !r.reads)
		return 0;
	struct uring_fork_key fk = { .ring = v->id, .child = in->child };
	if (!bpf_map_update_elem(&uring_forks, &fk, &r.id, BPF_ANY))
		in->reads = 1;
	return 0;
}

static long inherit_read_cb(struct bpf_map *map, struct uring_read_key *k, struct uring_read *v,
			    struct inherit *in)
{
	struct uring_fork_key fk = { .ring = k->ring, .child = in->child };
	__u64 *id = bpf_map_lookup_elem(&uring_forks, &fk);
	if (!id)
		return 0;
	struct uring_read_key ck = *k;
	struct uring_read cv = *v;
	ck.ring = *id;
	cv.tgid = in->child;
	if (bpf_map_update_elem(&uring_reads, &ck, &cv, BPF_NOEXIST))
		count_unkept();
	return 0;
}

static long inherited_cb(struct bpf_map *map, struct uring_fork_key *k, __u64 *v,
			 struct inherit *in)
{
	if (k->child == in->child)
		bpf_map_delete_elem(&uring_forks, k);
	return 0;
}

__noinline int uring_inherit(__u32 parent, __u32 child)
{
	if (!bpf_map_lookup_elem(&uring_procs, &parent))
		return 0;
	__u8 one = 1;
	bpf_map_update_elem(&uring_procs, &child, &one, BPF_ANY);
	struct inherit in = { .parent = parent, .child = child };
	bpf_for_each_map_elem(&urings, inherit_ring_cb, &in, 0);
	if (in.reads) {
		bpf_for_each_map_elem(&uring_reads, inherit_read_cb, &in, 0);
		bpf_for_each_map_elem(&uring_forks, inherited_cb, &in, 0);
	}
	return 0;
}

/* After a successful call the ring follower watches: io_uring_setup adds
 * a ring (its layout read from the params it filled), mmap of a ring's
 * descriptor locates a part of it, close forgets it. */
__noinline int follow_uring(struct pass *p)
{
	if (!p)
		return 0;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 flags = p->spec.flags;
	if (flags & SPEC_URING_SETUP) {
		/* struct io_uring_params, in u32s: sq_entries, cq_entries, flags
		 * at 0-2, features at 5, sq_off.head/tail at 10-11, .array at
		 * 16, cq_off.head/tail at 20-21, .cqes at 25. */
		__u32 prm[URING_PARAMS_LEN / 4];
		if (bpf_probe_read_user(prm, sizeof(prm), (void *)p->args[1]))
			return 0;
		struct uring r = {
			.id = __sync_fetch_and_add(&uring_ids, 1) + 1,
			.sq_entries = prm[0],
			.cq_entries = prm[1],
			.flags = prm[2],
			.features = prm[5],
			.sq_head = prm[10],
			.sq_tail = prm[11],
			.sq_array = prm[16],
			.cq_head = prm[20],
			.cq_tail = prm[21],
			.cqes = prm[25],
		};
		struct uring_key key = { .tgid = tgid, .fd = p->ret };
		drop_ring(&key);
		bpf_map_update_elem(&urings, &key, &r, BPF_ANY);
		__u8 one = 1;
		bpf_map_update_elem(&uring_procs, &tgid, &one, BPF_ANY);
	} else if (flags & SPEC_MAPS) {
		struct uring_key key = { .tgid = tgid, .fd = p->args[4] };
		struct uring *r = bpf_map_lookup_elem(&urings, &key);
		if (!r)
			return 0;
		__u64 at = p->ret;
		switch (p->args[5]) {
		case URING_OFF_SQ_RING:
			r->sq_ring = at;
			r->mapped |= MAPPED_SQ_RING;
			/* One mapping holds both rings. */
			if ((r->features & URING_FEAT_SINGLE_MMAP) && !(r->mapped & MAPPED_CQ_RING)) {
				r->cq_ring = at;
				r->mapped |= MAPPED_CQ_RING;
			}
			break;
		case URING_OFF_CQ_RING:
			r->cq_ring = at;
			r->mapped |= MAPPED_CQ_RING;
			break;
		case URING_OFF_SQES:
			r->sqes = at;
			r->mapped |= MAPPED_SQES;
			break;
		}
	} else if (flags & SPEC_CLOSES) {
		struct uring_key key = { .tgid = tgid, .fd = p->args[0] };
		drop_ring(&key);
	}
	return 0;
}

/* Whether capture_param has anything to read for parameter i in this
 * pass: most parameters of most calls have not, and asking here saves a
 * function call per parameter on every call. */
static __always_inline bool wanted(struct pass *p, __u32 i, const bool exit)
{
	struct param_spec *ps = &p->spec.p[i];
	/* Completions are looked for whatever the call returned, as long as
	 * it did (min_complete may be 0: the kernel posts completions all the
	 * same). */
	if (ps->kind == K_URING_COMPLETE)
		return exit;
	if (ps->kind == K_NONE || !p->args[i])
		return false;
	if (exit)
		return (ps->dir & DIR_OUT) && p->ok;
	switch (ps->kind) {
	case K_PATH:
	case K_STR:
	case K_STR_ARRAY:
	case K_MAPPED:
		return true;
	}
	return ps->dir & DIR_IN;
}

/* Returns the parameters whose memory could not be read. `exit` is a
 * constant at each call site, so each program holds only its own io_uring
 * walk (the verifier checks what a program holds, called or not). */
static __always_inline __u32 capture_pass(struct pass *p, const bool exit)
{
	__u32 failed = 0;
	for (__u32 i = 0; i < 6; i++) {
		if (!wanted(p, i, exit))
			continue;
		__u8 kind = p->spec.p[i].kind;
		if (kind == K_URING_SUBMIT) {
			if (!exit)
				emit_uring_submit(p, i);
		} else if (kind == K_URING_COMPLETE) {
			if (exit)
				emit_uring_complete(p, i);
		} else if (capture_param(p, i))
			failed |= 1 << i;
	}
	return failed;
}

static __always_inline bool load_spec(struct pass *p, __u32 nr)
{
	struct call_spec *s = bpf_map_lookup_elem(&specs, &nr);
	if (!s)
		return false;
	p->spec = *s;
	return true;
}

static __always_inline void emit_call(struct inflight *f, bool returned, __s64 ret)
{
	struct rec_call *r = reserve_record(sizeof(*r));
	if (!r)
		return;
	r->h.type = REC_CALL;
	r->h.tid = f->tid;
	r->h.seq = f->seq;
	r->h.time_ns = f->enter_ns;
	r->tgid = f->tgid;
	r->nr = f->nr;
	for (int i = 0; i < 6; i++)
		r->args[i] = f->args[i];
	r->exit_ns = returned ? bpf_ktime_get_ns() : 0;
	r->ret = ret;
	r->flags = returned ? CALL_RETURNED : 0;
	r->pad = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct inflight *f = traced_task(tgid, true);
	if (!f)
		return 0;
	f->nr = id;
	f->tid = (__u32)pid_tgid;
	f->tgid = tgid;
	f->args[0] = regs->di;
	f->args[1] = regs->si;
	f->args[2] = regs->dx;
	f->args[3] = regs->r10;
	f->args[4] = regs->r8;
	f->args[5] = regs->r9;
	/* The entry time first, the id after: whatever delays the second
	 * (an interrupt, the host pausing this vCPU), the id is taken between
	 * the call's entry and exit times, as the ptrace back end takes it, so
	 * sequence order never contradicts "ended before began" (strict
	 * replay would wait in a cycle). */
	struct pass p = { .tid = f->tid, .exit = 0 };
	bool known = (__u64)id < NR_MAX && load_spec(&p, id);
	if (known && (p.spec.flags & SPEC_ENDS_SPACE))
		emit_mapped_at_exit(tgid, f->tid);
	f->enter_ns = bpf_ktime_get_ns();
	f->seq = __sync_fetch_and_add(&next_seq, 1);
	f->active = 1;
	p.seq = f->seq;
	for (int i = 0; i < 6; i++)
		p.args[i] = f->args[i];
	f->retry = 0;
	if (known)
		f->retry = capture_pass(&p, false);
	/* No throttle here: a stop takes effect on the way back to user
	 * space, which the exit's throttle reaches too, and sent now it
	 * would interrupt a call that blocks. */
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_exit, struct pt_regs *regs, long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct inflight *f = traced_task(tgid, false);
	if (!f || !f->active) {
		if (f && f->forked) {
			/* A new task returning from the fork that made it: the
			 * parent's call and the fork record say all there is. */
			f->forked = 0;
		} else if (f || (!detached && is_traced(tgid))) {
			/* Tracing began while this task was inside its call. */
			struct counters *k = counters();
			if (k) {
				k->before_attach++;
				/* A call the gate held and a signal interrupted
				 * (an exit) returns a restart code and comes back;
				 * one a seccomp filter refused returns its errno,
				 * never entering. */
				if (ret < -516 || ret > -512)
					k->refused++;
			}
		}
		return 0;
	}
	f->active = 0;
	/* The kernel's error convention: -4095..-1. */
	bool ok = (unsigned long)ret < (unsigned long)-4095L;
	struct pass p = { .seq = f->seq, .tid = f->tid, .exit = 1, .ok = ok, .ret = ret };
	for (int i = 0; i < 6; i++)
		p.args[i] = f->args[i];
	if (f->nr < NR_MAX && load_spec(&p, f->nr)) {
		/* Outputs only after success (io_uring completions whatever the
		 * return), and what the io_uring follower watches. */
		capture_pass(&p, true);
		if (ok && (p.spec.flags & (SPEC_URING_SETUP | SPEC_MAPS | SPEC_CLOSES)))
			follow_uring(&p);
		/* An input in a page the program never touched (a constant in a
		 * library's read-only data, say) cannot be read at entry without
		 * faulting; the call itself faulted it in, and the kernel does not
		 * change inputs, so it is read again now. After an exec the
		 * address space is new: only its argv and environment can be
		 * read again, where the kernel copied them. */
		if (f->retry) {
			bool replaced = (p.spec.flags & SPEC_NEW_IMAGE) && ok;
			__u32 arrays = 0;
			p.exit = 0;
			for (__u32 i = 0; i < 6; i++) {
				bool array = p.spec.p[i].kind == K_STR_ARRAY;
				if (f->retry & (1 << i)) {
					if (!replaced)
						capture_param(&p, i);
					else if (array)
						emit_image_strings(&p, i, arrays);
				}
				arrays += array;
			}
		}
	}
	emit_call(f, true, ret);
	throttle(tgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	if (!is_traced(parent->tgid))
		return 0;
	__u32 tgid = child->tgid;
	__u8 one = 1;
	if (bpf_map_update_elem(&traced, &tgid, &one, BPF_ANY)) {
		/* The table is full: this process's threads and children
		 * would go unrecorded. Counted, never silent. */
		struct counters *k = counters();
		if (k)
			k->untracked++;
	}
	/* The child's storage now, so that its return from this fork is
	 * known for what it is (not a call entered before tracing began). */
	struct inflight *f = bpf_task_storage_get(&calls, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (f)
		f->forked = 1;
	/* fork (not a thread, not vfork): the child has the parent's rings. */
	/* (Read as plain addresses, as in stores_reach_a_file.) */
	bool own_mm = BPF_CORE_READ(child, mm) != BPF_CORE_READ(parent, mm);
	if (tgid != parent->tgid && own_mm)
		uring_inherit(parent->tgid, tgid);
	struct rec_fork *r = reserve_record(sizeof(*r));
	if (!r)
		return 0;
	r->h.type = REC_FORK;
	r->h.tid = child->pid;
	r->h.seq = __sync_fetch_and_add(&next_seq, 1);
	r->h.time_ns = bpf_ktime_get_ns();
	r->tgid = tgid;
	r->ppid = BPF_CORE_READ(child, real_parent, tgid);
	r->parent_tid = parent->pid;
	r->uid = BPF_CORE_READ(child, real_cred, uid.val);
	r->gid = BPF_CORE_READ(child, real_cred, gid.val);
	r->euid = BPF_CORE_READ(child, real_cred, euid.val);
	r->egid = BPF_CORE_READ(child, real_cred, egid.val);
	r->umask = BPF_CORE_READ(child, fs, umask);
	r->own_mm = own_mm;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!is_traced(p->tgid))
		return 0;
	uring_forget(p->tgid);
	/* A thread other than the leader exec'd and is the leader now. The
	 * old leader, if it had ended before, left its mark in `leader_gone`:
	 * its end is no longer the process's (ptrace never reports it; the
	 * exec supersedes it), and the mark would make the new leader's exit
	 * go out at once, and the process's real end never. */
	if (old_pid != p->pid) {
		__u32 tgid = p->tgid;
		bpf_map_delete_elem(&leader_gone, &tgid);
	}
	struct rec_exec *r = reserve_record(sizeof(*r));
	if (!r)
		return 0;
	r->h.type = REC_EXEC;
	r->h.tid = p->pid;
	r->h.seq = 0;
	r->h.time_ns = bpf_ktime_get_ns();
	r->tgid = p->tgid;
	r->old_tid = old_pid;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* The status the parent's wait reports for a process whose leader ended
 * with `leader_code`: the group's, if a thread ended the group. */
static __always_inline __u32 process_status(struct task_struct *p, __u32 leader_code)
{
	struct signal_struct *s = p->signal;
	if (BPF_CORE_READ(s, flags) & SIGNAL_GROUP_EXIT_FLAG)
		return BPF_CORE_READ(s, group_exit_code);
	return leader_code;
}

/* Records that thread `tid` of process `tgid` ended with wait status
 * `code`. */
static __always_inline void emit_exit(__u32 tid, __u32 tgid, __u32 code)
{
	struct rec_exit *r = reserve_record(sizeof(*r));
	if (!r)
		return;
	r->h.type = REC_EXIT;
	r->h.tid = tid;
	r->h.seq = __sync_fetch_and_add(&next_seq, 1);
	r->h.time_ns = bpf_ktime_get_ns();
	r->tgid = tgid;
	r->code = code;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* The leader's exit record waits for the process's end (its last thread,
 * which may be an io_uring worker): the first of the two to come leaves
 * its mark in `leader_gone`, the second emits the record. */
static __always_inline void leader_or_last_gone(struct task_struct *p, __u32 tgid, bool leader)
{
	__u32 mark = leader ? p->exit_code : LAST_THREAD_GONE;
	if (bpf_map_update_elem(&leader_gone, &tgid, &mark, BPF_NOEXIST) == 0)
		return;
	__u32 code = mark;
	if (!leader) {
		__u32 *left = bpf_map_lookup_elem(&leader_gone, &tgid);
		code = left ? *left : 0;
	}
	bpf_map_delete_elem(&leader_gone, &tgid);
	emit_exit(tgid, tgid, process_status(p, code));
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_task_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = p->tgid;
	if (!is_traced(tgid))
		return 0;
	bool leader = p->pid == tgid;
	if (p->flags & PF_IO_WORKER_FLAG) {
		/* Not the program's thread, but it may be the last one out. */
		if (group_dead)
			leader_or_last_gone(p, tgid, false);
		return 0;
	}
	struct inflight *f = bpf_task_storage_get(&calls, p, 0, 0);
	if (f && f->active) {
		/* exit, exit_group, or a call the task was killed inside. */
		f->active = 0;
		emit_call(f, false, 0);
	}
	/* The last thread of a process a signal ended: its shared file
	 * mappings are captured as at an exit_group (this tracepoint comes
	 * before the kernel drops the address space). */
	if (group_dead && (p->exit_code & 0x7f))
		emit_mapped_at_exit(tgid, p->pid);
	struct task_struct *execing = BPF_CORE_READ(p, signal, group_exec_task);
	if (leader && execing && execing != p)
		return 0; /* superseded: the exec's thread goes on as the leader */
	if (leader && group_dead) {
		emit_exit(tgid, tgid, process_status(p, p->exit_code));
		return 0;
	}
	if (!leader)
		emit_exit(p->pid, tgid, p->exit_code);
	if (leader || group_dead)
		leader_or_last_gone(p, tgid, leader);
	return 0;
}

/* A process stops being traced when its group leader is freed: the kernel
 * frees the leader only after every other thread of the group has been
 * released, so every thread has passed sched_process_exit by then. (Going
 * by signal->live instead lost exit records: live drops before the
 * tracepoint, so the last thread to drop it could delete the process while
 * another thread of an exit_group was still on its way there.) */
SEC("tp_btf/sched_process_free")
int BPF_PROG(on_task_free, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	if (p->pid != tgid || !is_traced(tgid))
		return 0;
	bpf_map_delete_elem(&traced, &tgid);
	bpf_map_delete_elem(&stopped, &tgid);
	bpf_map_delete_elem(&continued, &tgid);
	bpf_map_delete_elem(&child_stopped, &tgid);
	bpf_map_delete_elem(&last_sigchld, &tgid);
	bpf_map_delete_elem(&leader_gone, &tgid);
	bpf_map_delete_elem(&maps_taken, &tgid);
	uring_forget(tgid);
	return 0;
}

/* Records the delivery of `sig` (si_code `code`, from process `sender`)
 * to thread `tid` of process `tgid`. */
static __always_inline void emit_signal(__u32 tid, __u32 tgid, int sig, int code, __u32 sender)
{
	struct rec_signal *r = reserve_record(sizeof(*r));
	if (!r)
		return;
	r->h.type = REC_SIGNAL;
	r->h.tid = tid;
	r->h.seq = __sync_fetch_and_add(&next_seq, 1);
	r->h.time_ns = bpf_ktime_get_ns();
	r->tgid = tgid;
	r->signo = sig;
	r->code = code;
	r->sender = sender;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/signal_deliver")
int BPF_PROG(on_signal, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	if ((bpf_get_current_task_btf()->flags & PF_IO_WORKER_FLAG) || !is_traced(tgid))
		return 0;
	int code = info ? BPF_CORE_READ(info, si_code) : 0;
	/* Our own back-pressure stop is not the program's signal. */
	if (sig == SIGSTOP_NR && code == SI_KERNEL_CODE)
		return 0;
	/* A SIGKILL is the kernel ending each thread of a process on its way
	 * out: after exit_group (no siginfo), after a fatal signal (recorded
	 * by on_fatal_signal; its SIGKILL comes with a blank SI_USER
	 * siginfo), or after a SIGKILL sent, which the exit record names.
	 * ptrace shows no such delivery either. */
	if (sig == SIGKILL_NR)
		return 0;
	__u32 sender = info ? BPF_CORE_READ(info, _sifields._kill._pid) : 0;
	emit_signal((__u32)pid_tgid, tgid, sig, code, sender);
	return 0;
}

/* A fatal signal (its default action ends the process, and no tracer
 * watches) takes the kernel's short way: the process starts to exit as
 * the signal is sent, its threads die of SIGKILL, and the signal itself
 * never reaches signal_deliver. Recorded here, as delivered to the thread
 * it was sent to, as the ptrace recorder sees it. */
SEC("tp_btf/signal_generate")
int BPF_PROG(on_fatal_signal, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	if (sig == SIGKILL_NR || result != TRACE_SIGNAL_DELIVERED_CODE)
		return 0;
	__u32 tgid = task->tgid;
	if ((task->flags & PF_IO_WORKER_FLAG) || !is_traced(tgid))
		return 0;
	struct signal_struct *s = task->signal;
	if (!(BPF_CORE_READ(s, flags) & SIGNAL_GROUP_EXIT_FLAG) ||
	    BPF_CORE_READ(s, group_exit_code) != sig)
		return 0;
	/* The kernel's own signals come with no siginfo to read: SIGPIPE, for
	 * one, is sent as SEND_SIG_NOINFO (0), which the kernel fills in as
	 * SI_USER from the sending process (here, the one writing), and
	 * SEND_SIG_PRIV (1) as SI_KERNEL from no process. */
	int code = SI_USER_CODE;
	__u32 sender = bpf_get_current_pid_tgid() >> 32;
	if (info == SEND_SIG_PRIV_INFO) {
		code = SI_KERNEL_CODE;
		sender = 0;
	} else if (info) {
		code = BPF_CORE_READ(info, si_code);
		sender = BPF_CORE_READ(info, _sifields._kill._pid);
	}
	emit_signal(task->pid, tgid, sig, code, sender);
	return 0;
}

/* A wrapper's reflex: `su`, `runuser`, `sudo` and `script` wait for
 * their child with WUNTRACED, and when it stops they stop themselves
 * (`kill(getpid(), SIGSTOP)`), to continue it when they are continued.
 * After a back-pressure stop of the child nobody would continue the
 * wrapper: the recording hung. A traced process that sends itself a stop
 * signal within REFLEX_WINDOW_NS of a child's back-pressure stop is
 * published like one, so the recorder continues it; up the chain too
 * (sudo over runuser over the program). */
static __always_inline void on_stop_signal(int sig, struct kernel_siginfo *info,
					   struct task_struct *task)
{
	__u32 tgid = task->tgid;
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != tgid || !is_traced(tgid))
		return;
	int code = BPF_CORE_READ(info, si_code);
	if (code != SI_USER_CODE && code != SI_TKILL_CODE)
		return;
	__u64 *when = bpf_map_lookup_elem(&child_stopped, &tgid);
	if (!when || bpf_ktime_get_ns() - *when > REFLEX_WINDOW_NS)
		return;
	if (!publish_stop(tgid))
		return;
	struct counters *c = counters();
	if (c)
		c->reflex_stops++;
}

/* A child's exit its parent may never hear of. SIGCHLD does not queue:
 * one sent while another is pending is dropped. Each back-pressure stop
 * sends the parent CLD_STOPPED, and its resume CLD_CONTINUED; a parent
 * that waits for its child only when a SIGCHLD says it exited (`script`,
 * through util-linux's ul_pty) never reaps a child whose exit came while
 * one of those was pending, and waits forever. Nothing here can mend
 * that, so it is counted and the recorder says so at once. */
static __always_inline void on_sigchld(struct kernel_siginfo *info, struct task_struct *task,
				       int result)
{
	__u32 tgid = task->tgid;
	if (!is_traced(tgid))
		return;
	__s32 code = BPF_CORE_READ(info, si_code);
	if (result == SIGNAL_QUEUED) {
		bpf_map_update_elem(&last_sigchld, &tgid, &code, BPF_ANY);
		return;
	}
	if (result != SIGNAL_ALREADY_PENDING || code < CLD_EXITED_CODE || code > CLD_DUMPED_CODE)
		return;
	__s32 *pending = bpf_map_lookup_elem(&last_sigchld, &tgid);
	if (!pending || (*pending != CLD_STOPPED_CODE && *pending != CLD_CONTINUED_CODE))
		return;
	/* The program's own stops and resumes do this without us. */
	if (!bpf_map_lookup_elem(&child_stopped, &tgid))
		return;
	masked_parent = tgid;
	/* The exit is told from the child's own context. */
	masked_child = BPF_CORE_READ(info, _sifields._sigchld._pid);
	bpf_get_current_comm(masked_child_comm, sizeof(masked_child_comm));
	__sync_fetch_and_add(&masked_exits, 1);
}

/* SIGCONT takes effect (resumes the stopped, discards pending stops)
 * before this tracepoint, under the same lock that queues a stop. */
SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	if (sig == SIGCHLD_NR) {
		/* The process's own queue (tgkill) is not where exits go. */
		if (group && (unsigned long)info > 2)
			on_sigchld(info, task, result);
		return 0;
	}
	if (sig >= SIGSTOP_NR && sig <= SIGTTOU_NR) {
		/* SEND_SIG_NOINFO and SEND_SIG_PRIV are not pointers. */
		if ((unsigned long)info > 2)
			on_stop_signal(sig, info, task);
		return 0;
	}
	if (sig != SIGCONT_NR)
		return 0;
	__u32 tgid = task->tgid;
	if (!is_traced(tgid))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	bpf_map_update_elem(&continued, &tgid, &now, BPF_ANY);
	return 0;
}
