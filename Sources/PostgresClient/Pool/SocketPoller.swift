#if os(Linux)
import Foundation
import Glibc
internal import CEpoll
import Synchronization

/// One thread that waits on many connections' sockets at once, with epoll, and lets each
/// waiting piece of work go on when its socket is ready.
///
/// A caller queues its commands without blocking, hands the rest to ``watch(_:for:)`` and
/// suspends; the poller reads the answers as they arrive and resumes the caller when its work
/// is done. A thread then serves many connections instead of each connection waiting on a
/// thread of its own, and waking up is shared by all its connections ready at the same moment.
///
/// The process has one per core (``PollerGroup``), each connection watched by one of them.
/// Together they are a task executor (``PostgresPool/taskExecutor``): a task that prefers it
/// runs on the thread of the poller that read its last answer, so that it goes on at once,
/// without a cooperative thread having to be woken to pick it up.
final class SocketPoller: Sendable {
    /// What a watched piece of work needs next.
    enum Interest {
        /// Its socket must become readable.
        case read
        /// Output is still queued: its socket must become writable (or readable).
        case write
        /// It is finished; the poller forgets it.
        case done
    }

    /// Work the poller drives: ``advance()`` runs on the poller's thread whenever the socket is
    /// ready, and ``finish()`` once, when it has returned `.done`.
    protocol Work: AnyObject, Sendable {
        var socket: Int32 { get }
        func advance() -> Interest
        func finish()
    }

    private let epoll: Int32
    /// An eventfd in the epoll set, written to wake the thread when a job is queued while it
    /// waits for sockets.
    private let wakeDescriptor: Int32
    /// The work waiting on each socket. Each socket is armed for one event at a time
    /// (`EPOLLONESHOT`), so an event is always for the work registered here.
    private let waiting = Mutex<[Int32: any Work]>([:])

    private struct Jobs {
        var queued: [UnownedJob] = []
        /// The executor the jobs belong to (the group), set before the first job comes.
        var executor: UnownedTaskExecutor?
        /// The thread is, or is about to be, blocked in `epoll_wait` with nothing queued.
        var isWaiting = false
    }
    private let jobs = Mutex(Jobs())
    /// The poller's thread, once it runs (`pthread_self()`).
    private let thread = Atomic<UInt>(0)

    /// Whether the caller is running on the poller's thread.
    var isCurrentThread: Bool { thread.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Starts a poller whose thread is called `name`; nil if the system refuses an epoll
    /// instance or an eventfd.
    init?(name: String) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { return nil }
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wakeDescriptor))
        guard wakeDescriptor >= 0, epoll_ctl(epoll, EPOLL_CTL_ADD, wakeDescriptor, &event) == 0 else {
            close(epoll)
            if wakeDescriptor >= 0 { close(wakeDescriptor) }
            return nil
        }
        // Named from inside the thread, as `top` and `perf` show it: Linux keeps 15 bytes of a
        // thread's name and refuses a longer one.
        let thread = Thread { [self] in
            Thread.current.name = String(decoding: name.utf8.prefix(15), as: UTF8.self)
            run()
        }
        thread.start()
    }

    /// Makes `executor` the one this poller's jobs run on; called once, before any job.
    func runJobs(on executor: UnownedTaskExecutor) {
        jobs.withLock { $0.executor = executor }
    }

    /// Starts driving `work`: it is advanced once its socket is ready for `interest`.
    ///
    /// Returns false, and does nothing, when the socket cannot be watched; the caller then
    /// finishes the work itself.
    func watch(_ work: any Work, for interest: Interest) -> Bool {
        let socket = work.socket
        guard socket >= 0, interest != .done else { return false }
        waiting.withLock { $0[socket] = work }
        if arm(socket, for: interest) { return true }
        waiting.withLock { $0[socket] = nil }
        return false
    }

    /// Queues a job of a task that prefers the group's executor; it runs on this poller's
    /// thread.
    func enqueue(_ job: UnownedJob) {
        // On the poller's own thread (a task resumed by the work it finished) the loop runs
        // the job before it waits again, so waking it would only cost a write, a read and an
        // extra pass through epoll_wait.
        if isCurrentThread {
            jobs.withLock { $0.queued.append(job) }
            return
        }
        let isWaiting = jobs.withLock { jobs in
            jobs.queued.append(job)
            defer { jobs.isWaiting = false }
            return jobs.isWaiting
        }
        if isWaiting { _ = eventfd_write(wakeDescriptor, 1) }
    }

    /// Runs the jobs queued so far; returns whether there were any.
    @discardableResult
    private func runQueuedJobs(_ batch: inout [UnownedJob], waitingIfNone: Bool) -> Bool {
        let executor = jobs.withLock { jobs in
            swap(&batch, &jobs.queued)
            if waitingIfNone { jobs.isWaiting = batch.isEmpty }
            return jobs.executor
        }
        guard !batch.isEmpty else { return false }
        guard let executor else { preconditionFailure("a job came before the poller was given its executor") }
        for job in batch { job.runSynchronously(on: executor) }
        batch.removeAll(keepingCapacity: true)
        return true
    }

    /// Arms a socket for one event; adds it to the epoll set the first time (or again after a
    /// socket of that number was closed, which removes it).
    private func arm(_ socket: Int32, for interest: Interest) -> Bool {
        var mask = EPOLLIN.rawValue | EPOLLONESHOT.rawValue | EPOLLRDHUP.rawValue
        if interest == .write { mask |= EPOLLOUT.rawValue }
        var event = epoll_event(events: mask, data: epoll_data_t(fd: socket))
        if epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) == 0 { return true }
        guard errno == ENOENT else { return false }
        return epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0
    }

    /// Runs the queued jobs, then waits for sockets (without blocking while jobs are queued),
    /// and advances the work of every ready socket.
    private func run() {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        let capacity = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        var batch: [UnownedJob] = []
        while true {
            let hadJobs = runQueuedJobs(&batch, waitingIfNone: true)
            let count = epoll_wait(epoll, events, Int32(capacity), hadJobs ? 0 : -1)
            guard count > 0 else { continue }
            for index in 0..<Int(count) {
                let socket = events[index].data.fd
                if socket == wakeDescriptor {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeDescriptor, &value)
                    continue
                }
                guard let work = waiting.withLock({ $0[socket] }) else { continue }
                let next = work.advance()
                if next != .done, arm(socket, for: next) { continue }
                waiting.withLock { $0[socket] = nil }
                work.finish()
                // A task on this executor that the work resumed goes on now, so that its next
                // request is sent before the next socket's answer is read, as a client serving
                // its connections in turn would; its next request reaches the server sooner.
                runQueuedJobs(&batch, waitingIfNone: false)
            }
        }
    }
}
#endif
