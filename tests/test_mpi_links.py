"""The mpi GPU algorithms' CUDA IPC links (floydwarp.mpi.links) on a stand-in CUDA runtime:
threads for ranks, host buffers for GPU memory, and a log of what each stream waits for."""
import ctypes
import queue
import random
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from floydwarp.errors import DeviceError, FloydwarpError
from floydwarp.mpi import links as mpi_links
from floydwarp.mpi.links import IpcGroup, IpcLinks, links_for
from floydwarp.multigpu.threads import in_threads


class Runtime:
    """CuPy's CUDA runtime as IpcGroup calls it, for ranks that are threads of one process.

    An event remembers the broadcast in which it was last recorded (``now[rank]``, set by the
    test before each call), and every wait notes which broadcast's record it found: a reused
    event recorded again too early shows up as a wait that found a later broadcast's record.
    Copies happen at once (ctypes.memmove), after a random pause that shakes the threads' order."""

    def __init__(self, allocations):
        self.allocations = allocations        # base address -> the numpy buffer there
        self.now, self.latest, self.waits, self.copies, self.closed = {}, {}, [], [], []
        self.lock, self.count = threading.Lock(), 0

    def eventCreateWithFlags(self, flags):
        assert flags == mpi_links.EVENT_FLAGS
        with self.lock:
            self.count += 1
            return self.count

    def ipcGetEventHandle(self, event):
        return b"event %d" % event

    def ipcOpenEventHandle(self, handle):
        return int(handle.split()[1])

    def eventRecord(self, event, stream):
        time.sleep(random.random() * 1e-4)
        self.latest[event] = self.now[stream]

    def streamWaitEvent(self, stream, event, flags):
        self.waits.append((stream, self.now[stream], event, self.latest.get(event)))

    def memcpyAsync(self, dst, src, nbytes, kind, stream):
        assert kind == mpi_links.COPY_DEFAULT
        time.sleep(random.random() * 1e-4)
        ctypes.memmove(dst, src, nbytes)
        self.copies.append((stream, self.now[stream]))

    def ipcGetMemHandle(self, base):
        assert base in self.allocations, "only an allocation's base is exported"
        return b"memory %d" % base

    def ipcOpenMemHandle(self, handle):
        return int(handle.split()[1])

    def ipcCloseMemHandle(self, ptr):
        self.closed.append(("memory", ptr))

    def eventDestroy(self, event):
        self.closed.append(("event", event))

    def allocation_of(self, ptr):
        for base, buffer in self.allocations.items():
            if base <= ptr < base + buffer.nbytes:
                return base, buffer.nbytes
        raise AssertionError(f"no allocation holds {ptr:#x}")


class Array:
    """A device array as IpcLinks.bcast sees it: a contiguous view into a rank's allocation."""

    def __init__(self, view):
        self.view = view
        self.size, self.nbytes = view.size, view.nbytes
        self.data = SimpleNamespace(ptr=view.ctypes.data)
        self.flags = SimpleNamespace(c_contiguous=view.flags.c_contiguous)


class Mailboxes:
    """A control plane with MPI's eager semantics, for ranks that are threads: ``bcast`` and
    ``gather`` post and take messages between pairs of ranks, and return without waiting for
    any other rank (a thread barrier would order the ranks more than MPI does)."""

    def __init__(self, size):
        self.size = size
        self.boxes = {(a, b): queue.Queue() for a in range(size) for b in range(size)}
        self.meeting = threading.Barrier(size, timeout=30)

    def of(self, rank):
        boxes, size, meeting = self.boxes, self.size, self.meeting

        class Control:
            def bcast(self, obj, root=0):
                if rank == root:
                    for other in range(size):
                        if other != root:
                            boxes[root, other].put(obj)
                    return obj
                return boxes[root, rank].get(timeout=30)

            def gather(self, obj, root=0):
                if rank != root:
                    boxes[rank, root].put(obj)
                    return None
                got = [obj if r == root else boxes[r, root].get(timeout=30) for r in range(size)]
                time.sleep(random.random() * 3e-4)       # a root slow to go on, while the members do
                return got

            def barrier(self):
                meeting.wait()

        control = Control()
        control.rank, control.size = rank, size
        return control


def in_ranks(main, size):
    """``main(control)`` in a thread per rank over :class:`Mailboxes`; the results by rank."""
    mail = Mailboxes(size)
    return in_threads(lambda thread: main(mail.of(thread.rank)), size, timeout=60, on_failure=mail.meeting.abort)


@pytest.mark.parametrize("size", [2, 3, 4])
def test_ipc_broadcasts_copy_the_roots_bytes_and_never_wait_on_a_reused_event_too_early(size):
    """Many broadcasts from changing roots, each from a view at an offset inside a larger
    allocation (as CuPy's pool places arrays): every member ends with the root's bytes; every
    copy waited for the root's event of that broadcast, and the root for every member's.  Without
    the barrier that ends a broadcast, a member records its event again before a slow root has
    waited on it, and this fails for 3 and 4 ranks."""
    random.seed(size)
    allocations = {}
    for rank in range(size):
        buffer = np.zeros(64, np.int32)
        allocations[buffer.ctypes.data] = buffer
    rt = Runtime(allocations)
    buffers = list(allocations.values())
    rounds = 60
    roots = [random.randrange(size) for _ in range(rounds)]

    def rank_main(control):
        me, stream = control.rank, control.rank
        group = IpcGroup(control, rt, allocation_of=rt.allocation_of)
        got = []
        for s, root in enumerate(roots):
            rt.now[stream] = s
            view = buffers[me][8 + s % 5:8 + s % 5 + 16]          # offsets change; the size does not
            if me == root:
                view[:] = np.arange(16) + 1000 * s
            IpcLinks.bcast(group, Array(view), root, SimpleNamespace(ptr=stream))
            got.append(view.copy())
        opened = dict(group.opened)
        group.close()
        return got, opened

    results = in_ranks(rank_main, size)
    for me, (got, opened) in enumerate(results):
        for s, values in enumerate(got):
            np.testing.assert_array_equal(values, np.arange(16) + 1000 * s, err_msg=f"rank {me}, broadcast {s}")
        assert set(opened.values()) <= set(allocations) - {buffers[me].ctypes.data}
    # every wait found the record of its own broadcast, never a later one
    assert rt.waits and all(found == s for _, s, _, found in rt.waits)
    waits = {(stream, s) for stream, s, _, _ in rt.waits}
    for s, root in enumerate(roots):
        members = [r for r in range(size) if r != root]
        assert sum(1 for stream, t, _, _ in rt.waits if (stream, t) == (root, s)) == len(members)
        assert all((m, s) in waits and (m, s) in rt.copies for m in members)
    # each rank destroyed its own events and those of each peer it opened
    assert sum(kind == "event" for kind, _ in rt.closed) == size * 2 * size


def test_ipc_broadcast_refusals():
    with pytest.raises(FloydwarpError, match="contiguous"):
        IpcLinks.bcast(object(), SimpleNamespace(size=4, flags=SimpleNamespace(c_contiguous=False)), 0, None)
    IpcLinks.bcast(None, SimpleNamespace(size=4), 0, None)                     # no group: nothing to do

    class NoIpc(Runtime):
        def ipcGetMemHandle(self, base):
            raise RuntimeError("cudaErrorInvalidValue")

    buffer = np.zeros(8, np.int32)
    rt = NoIpc({buffer.ctypes.data: buffer})
    rt.now[0] = 0

    def alone(control):
        group = IpcGroup(control, rt, allocation_of=rt.allocation_of)
        group.broadcast(Array(buffer), 0, SimpleNamespace(ptr=0))

    with pytest.raises(DeviceError, match="links='nccl'"):
        in_ranks(alone, 1)


class Comm:
    """An MPI communicator as links_for uses it (Barrier only)."""

    def __init__(self):
        self.barriers = 0

    def Barrier(self):
        self.barriers += 1


@pytest.mark.parametrize("asked, one_node, reach, chosen", [
    (None, True, True, IpcLinks), ("auto", True, True, IpcLinks), ("auto", True, False, mpi_links.NcclLinks),
    ("auto", False, True, mpi_links.NcclLinks), ("ipc", True, False, IpcLinks),
    ("nccl", True, True, mpi_links.NcclLinks)])
def test_links_are_chosen_by_where_the_ranks_run(monkeypatch, asked, one_node, reach, chosen):
    monkeypatch.setattr(mpi_links, "reach_each_other", lambda comm, device: reach)
    comm = Comm()
    plan = SimpleNamespace(options={} if asked is None else {"links": asked})
    with links_for(comm, plan, 0, one_node) as links:
        assert type(links) is chosen
    assert comm.barriers == 1                       # closed only once every rank is done with it


@pytest.mark.parametrize("asked, message", [("ipc", "one node"), ("shm", "one of auto, ipc, nccl")])
def test_links_refusals(asked, message):
    with pytest.raises(FloydwarpError, match=message), links_for(Comm(), SimpleNamespace(options={"links": asked}), 0,
                                                                 False):
        pass


def test_the_mpi_gpu_algorithms_declare_links():
    import floydwarp as fw
    from floydwarp import registry

    for impl in registry.algorithms("mpi"):
        assert ("links" in impl.options) == (impl.algorithm in ("gpu-2d", "gpu-rows"))
    with pytest.raises(TypeError, match="links"):
        fw.solve(fw.generate.erdos_renyi(5, 50, seed=1), backend="cpu", links="ipc")


@pytest.mark.parametrize("environ, settings", [
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_COMM_WORLD_SIZE": "2"}, {"OMPI_MCA_pml": "ob1"}),
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_MCA_pml": "ucx"},
     {"OMPI_MCA_pml": "ucx"}),                                                    # the user's choice stays
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_COMM_WORLD_SIZE": "4"}, {}),       # across nodes: MPI's defaults
    ({}, {})])
def test_mpi_starts_with_shared_memory_messaging_on_one_node(monkeypatch, environ, settings):
    import sys

    from floydwarp.mpi import comm

    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    monkeypatch.setitem(sys.modules, "mpi4py", SimpleNamespace(MPI=SimpleNamespace(COMM_WORLD="world")))
    environ = dict(environ)
    assert comm.world(environ) == "world"
    assert {k: v for k, v in environ.items() if k.startswith("OMPI_MCA")} == settings


class IpcOnMailboxes:
    """The links of test_multigpu's simulated schedule through this protocol: each communicator an
    :class:`IpcGroup` per member over :class:`Mailboxes`, every array an allocation of its own."""

    class Plain(Runtime):
        """The stand-in runtime without the log: any address is an allocation's base."""

        def __init__(self):
            super().__init__({})

        def eventRecord(self, event, stream):
            pass

        def streamWaitEvent(self, stream, event, flags):
            pass

        def memcpyAsync(self, dst, src, nbytes, kind, stream):
            ctypes.memmove(dst, src, nbytes)

        def ipcGetMemHandle(self, base):
            return b"memory %d" % base

    runtime = Plain()

    class group:
        def __init__(self, size):
            self.mail = Mailboxes(size)

        def member(self, index):
            return IpcGroup(self.mail.of(index), IpcOnMailboxes.runtime, allocation_of=lambda ptr: (ptr, 0))

        def abort(self):
            self.mail.meeting.abort()

    @staticmethod
    def broadcast(comm, array, root, stream):
        IpcLinks.bcast(comm, Array(array), root, SimpleNamespace(ptr=0))


@pytest.mark.parametrize("shape", [(1, 4), (4, 1), (2, 2), (2, 4), (3, 2)])
def test_the_whole_schedule_through_ipc_broadcasts_is_exact(shape):
    """Gpu2D's rounds (test_multigpu's simulation: threads for ranks, NumPy for the kernels) with
    every pivot and panel moved by this protocol, on the grids of 4, 6 and 8 GPUs."""
    import floydwarp as fw
    from conftest import random_weight_matrix
    from test_multigpu import _simulate

    from floydwarp import numeric

    rng = np.random.default_rng(sum(shape))
    for n, width in ((333, 64), (130, 128)):
        w = random_weight_matrix(rng, n, density=0.05, low=1, high=20)
        want = fw.solve(w, backend="reference", dtype="float64").to_dense()
        got = _simulate(w, shape, width, True, links=IpcOnMailboxes).astype(np.float64)
        got[got >= numeric.inf_of(np.int32)] = np.inf
        np.testing.assert_array_equal(got, want)
