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

#define SIGSTOP_NR 19
#define SIGCONT_NR 18
#define SI_KERNEL_CODE 0x80
#define VM_WRITE_FLAG 0x2
#define VM_SHARED_FLAG 0x8
#define MNT_INTERNAL_FLAG 0x4000

/* Set by the recorder before loading. */
const volatile __u64 data_max = CAPTURE_MAX; /* bytes kept per data buffer */
const volatile __u64 high_water = 1 << 20;   /* ring bytes that stop a process */
const volatile __u64 spill_at = 3 << 19;     /* ring bytes past which data is spilled */

/* The next sequence id; the recorder takes ids from it too. */
__u64 next_seq = 1;
/* Bumped at every back-pressure stop, so the recorder knows to look. */
__u64 stop_requests = 0;
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
	__u8 one = 1;
	/* Published already: the recorder has yet to resume it, and will. */
	if (bpf_map_update_elem(&stopped, &tgid, &one, BPF_NOEXIST))
		return;
	__sync_fetch_and_add(&stop_requests, 1);
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
	struct file *f = vma->vm_file;
	if (!f)
		return false;
	if (!(BPF_CORE_READ(f, f_path.mnt, mnt_flags) & MNT_INTERNAL_FLAG))
		return true;
	char name[8] = {};
	bpf_probe_read_kernel(name, 6, BPF_CORE_READ(f, f_path.dentry, d_name.name));
	return name[0] == 'm' && name[1] == 'e' && name[2] == 'm' && name[3] == 'f' &&
	       name[4] == 'd' && name[5] == ':';
}

/* Before a call that ends the address space (exit_group, execve): each
 * shared writable file mapping still there becomes a mapped_at_exit
 * pseudo-call holding its bytes (the stores since its last msync, which
 * reach the file with no call), recorded before the call itself. */
static __noinline int emit_mapped_at_exit(__u32 tgid, __u32 tid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	/* A vfork child borrows its parent's address space, which outlives
	 * the child's exec or exit: nothing ends (and a spawn from a program
	 * with a large mapping would copy it whole each time). */
	if (task->vfork_done)
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
		__u64 start = vma->vm_start;
		__u64 len = vma->vm_end - start;
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
			continue;
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
	}
	bpf_iter_task_vma_destroy(&it);
	return 0;
}

/* Emits a NUL-terminated string of at most `max` bytes. */
__noinline int emit_string(struct cap *c, __u32 max)
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
	return (flags & CAP_FAILED) != 0;
}

/* argv/envp: each element a string capture. */
struct strs {
	struct cap c;
	__u64 base;
};

static long str_cb(__u64 i, struct strs *s)
{
	__u64 p = 0;
	if (bpf_probe_read_user(&p, sizeof(p), (void *)(s->base + i * 8)) || !p)
		return 1;
	s->c.addr = p;
	s->c.elem = i;
	emit_string(&s->c, STR_MAX_LEN);
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
};

static long iov_cb(__u64 i, struct iovs *v)
{
	__u64 iov[2];
	if (bpf_probe_read_user(iov, sizeof(iov), (void *)(v->base + i * 16)))
		return 1;
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
	emit_data(&v->c);
	return 0;
}

/* The elements are numbered from c->elem. */
__noinline int emit_iovecs(struct cap *c, __u64 base, __u64 count, __u64 left, int spread)
{
	if (!c)
		return 0;
	struct iovs v = { .c = *c, .base = base, .left = left, .first = c->elem, .spread = spread };
	if (count > IOV_MAX_LEN)
		count = IOV_MAX_LEN;
	bpf_loop(count, iov_cb, &v, 0);
	return 0;
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
			return 0;
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
		emit_iovecs(&c, addr, arg_of(p, ps.len_arg), left, p->exit);
	} else if (ps.kind == K_MSGHDR) {
		/* struct msghdr: msg_iov at offset 16, msg_iovlen at 24. */
		__u64 hdr[4];
		if (bpf_probe_read_user(hdr, sizeof(hdr), (void *)addr)) {
			c.len = 56;
			c.flags |= CAP_FAILED;
			c.addr = 0;
			c.want = 0;
			emit_data(&c);
			return 0;
		}
		emit_iovecs(&c, hdr[2], hdr[3], left, p->exit);
	} else if (ps.kind == K_IOCBS) {
		__s64 nr = arg_of(p, ps.len_arg);
		return emit_aio(&c, nr > 0 ? nr : 0);
	} else if (ps.kind == K_IOEVENTS) {
		return emit_aio(&c, left);
	}
	return 0;
}

/* Whether capture_param has anything to read for parameter i in this
 * pass: most parameters of most calls have not, and asking here saves a
 * function call per parameter on every call. */
static __always_inline bool wanted(struct pass *p, __u32 i)
{
	struct param_spec *ps = &p->spec.p[i];
	if (ps->kind == K_NONE || !p->args[i])
		return false;
	if (p->exit)
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

/* Returns the parameters whose memory could not be read. */
static __always_inline __u32 capture_pass(struct pass *p)
{
	__u32 failed = 0;
	for (__u32 i = 0; i < 6; i++)
		if (wanted(p, i) && capture_param(p, i))
			failed |= 1 << i;
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
		f->retry = capture_pass(&p);
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
			if (k)
				k->before_attach++;
		}
		return 0;
	}
	f->active = 0;
	/* The kernel's error convention: -4095..-1. */
	bool ok = (unsigned long)ret < (unsigned long)-4095L;
	struct pass p = { .seq = f->seq, .tid = f->tid, .exit = 1, .ok = ok, .ret = ret };
	for (int i = 0; i < 6; i++)
		p.args[i] = f->args[i];
	if ((ok || f->retry) && f->nr < NR_MAX && load_spec(&p, f->nr)) {
		if (ok)
			capture_pass(&p);
		/* An input in a page the program never touched (a constant in a
		 * library's read-only data, say) cannot be read at entry without
		 * faulting; the call itself faulted it in, and the kernel does not
		 * change inputs, so it is read again now. Not after an exec: the
		 * address space is new. */
		if (f->retry && !(p.spec.flags & SPEC_NEW_IMAGE)) {
			p.exit = 0;
			for (__u32 i = 0; i < 6; i++)
				if (f->retry & (1 << i))
					capture_param(&p, i);
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
	r->own_mm = child->mm != parent->mm;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!is_traced(p->tgid))
		return 0;
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

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_task_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	if (!is_traced(tgid))
		return 0;
	struct inflight *f = bpf_task_storage_get(&calls, p, 0, 0);
	if (f && f->active) {
		/* exit, exit_group, or a call the task was killed inside. */
		f->active = 0;
		emit_call(f, false, 0);
	}
	struct task_struct *execing = BPF_CORE_READ(p, signal, group_exec_task);
	bool superseded = execing && execing != p && p->pid == p->tgid;
	if (!superseded) {
		struct rec_exit *r = reserve_record(sizeof(*r));
		if (r) {
			r->h.type = REC_EXIT;
			r->h.tid = p->pid;
			r->h.seq = __sync_fetch_and_add(&next_seq, 1);
			r->h.time_ns = bpf_ktime_get_ns();
			r->tgid = tgid;
			r->code = p->exit_code;
			bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
		}
	}
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
	return 0;
}

SEC("tp_btf/signal_deliver")
int BPF_PROG(on_signal, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	if (!is_traced(tgid))
		return 0;
	int code = info ? BPF_CORE_READ(info, si_code) : 0;
	/* Our own back-pressure stop is not the program's signal. */
	if (sig == SIGSTOP_NR && code == SI_KERNEL_CODE)
		return 0;
	struct rec_signal *r = reserve_record(sizeof(*r));
	if (!r)
		return 0;
	r->h.type = REC_SIGNAL;
	r->h.tid = (__u32)pid_tgid;
	r->h.seq = __sync_fetch_and_add(&next_seq, 1);
	r->h.time_ns = bpf_ktime_get_ns();
	r->tgid = tgid;
	r->signo = sig;
	r->code = code;
	r->sender = info ? BPF_CORE_READ(info, _sifields._kill._pid) : 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* SIGCONT takes effect (resumes the stopped, discards pending stops)
 * before this tracepoint, under the same lock that queues a stop. */
SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	if (sig != SIGCONT_NR)
		return 0;
	__u32 tgid = task->tgid;
	if (!is_traced(tgid))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	bpf_map_update_elem(&continued, &tgid, &now, BPF_ANY);
	return 0;
}
