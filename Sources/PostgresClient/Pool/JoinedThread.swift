import Foundation
import Synchronization

/// A thread of its own whose end can be awaited, and whose end really is the end.
///
/// ``ended`` finishes only once the thread has terminated, its thread-local destructors
/// included. That matters for any thread that used libpq: libcrypto, which libpq loads, keeps
/// state per thread and frees it in such a destructor, while its exit handler frees the state
/// of every thread still registered. A process that exits while such a thread is still ending
/// frees that state twice. A thread that signals "done" from its own body and then returns
/// leaves exactly that window open; a joined thread closes it, so whoever waited may exit.
///
/// ```swift
/// let thread = JoinedThread(named: "cutover-listener")
/// thread.start { loop.run() }
/// await thread.ended.wait()
/// ```
package final class JoinedThread: Sendable {
    /// The thread's name, as `top` and `perf` show it (the first 15 bytes).
    package let name: String
    /// Finishes once the thread has run its body and terminated.
    package let ended = Completion()
    private let isStarted = Atomic(false)

    /// A thread that has not started yet.
    package init(named name: String) {
        self.name = name
    }

    /// Runs `body` on the thread. Call it once.
    package func start(_ body: @escaping @Sendable () -> Void) {
        let (exchanged, _) = isStarted.compareExchange(expected: false, desired: true, ordering: .relaxed)
        precondition(exchanged, "thread \(name) was started twice")
        let context = Unmanaged.passRetained(ThreadStart(thread: self, body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { context in
            let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
            start.thread.run(start.body)
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            fatalError("cannot start thread \(name): \(String(cString: strerror(result)))")
        }
    }

    /// On the new thread.
    private func run(_ body: () -> Void) {
        // Linux keeps 15 bytes of a thread's name and refuses a longer one.
        Thread.current.name = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        body()
        ThreadReaper.shared.join(pthread_self(), then: ended)
    }
}

/// What a new thread needs, passed through `pthread_create`'s one pointer.
private final class ThreadStart {
    let thread: JoinedThread
    let body: () -> Void

    init(thread: JoinedThread, body: @escaping () -> Void) {
        self.thread = thread
        self.body = body
    }
}

/// Joins threads that have run their bodies, on a thread of its own that never ends, and
/// then finishes their completions.
private final class ThreadReaper: @unchecked Sendable {
    // Safe to share because `ending` is only touched while `condition` is locked.
    static let shared = ThreadReaper()
    private let condition = NSCondition()
    private var ending: [(thread: pthread_t, ended: Completion)] = []

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "cutover-reaper"
        thread.start()
    }

    /// Called by a thread as the last thing it does.
    func join(_ thread: pthread_t, then ended: Completion) {
        condition.lock()
        ending.append((thread, ended))
        condition.unlock()
        condition.signal()
    }

    private func run() {
        var batch: [(thread: pthread_t, ended: Completion)] = []
        while true {
            condition.lock()
            while ending.isEmpty { condition.wait() }
            swap(&batch, &ending)
            condition.unlock()
            for (thread, ended) in batch {
                pthread_join(thread, nil)
                ended.finish()
            }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
