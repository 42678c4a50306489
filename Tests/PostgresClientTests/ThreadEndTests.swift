import CutoverTestSupport
import Foundation
import PostgresClient
import Synchronization
import Testing

/// "Done" means the thread has ended, its thread-local destructors included: libcrypto frees
/// its per-thread state in such a destructor, and a process that exits while one still runs
/// frees that state twice.
@Suite("Thread ends")
struct ThreadEndTests {
    @Test func aJoinedThreadHasEndedWhenItsCompletionFinishes() async {
        let token = ThreadExitProbe.newToken()
        let thread = JoinedThread(named: "cutover-test-joined-thread")
        thread.start { ThreadExitProbe.mark(token) }
        await thread.ended.wait()
        #expect(ThreadExitProbe.hasEnded(token))
    }

    @Test func runOnDedicatedThreadReturnsOnlyOnceItsThreadHasEnded() async throws {
        let token = ThreadExitProbe.newToken()
        let value = try await runOnDedicatedThread {
            ThreadExitProbe.mark(token)
            return 42
        }
        #expect(value == 42)
        #expect(ThreadExitProbe.hasEnded(token))

        let thrown = ThreadExitProbe.newToken()
        await #expect(throws: PostgresError.self) {
            try await runOnDedicatedThread { () throws -> Int in
                ThreadExitProbe.mark(thrown)
                throw PostgresError(code: .connectionFailed, message: "refused on purpose")
            }
        }
        #expect(ThreadExitProbe.hasEnded(thrown))
    }

    @Test(.timeLimit(.minutes(3)))
    func aPoolsShutdownReturnsOnlyOnceItsConnectionsThreadsHaveEnded() async throws {
        let database = try await TestPostgres.database("thread_end")
        let pool = PostgresPool(configuration: database.configuration(applicationName: "thread-end"), maximumConnections: 2)
        let tokens = [ThreadExitProbe.newToken(), ThreadExitProbe.newToken()]
        // Two callers at once, so that both connections' threads are marked.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for token in tokens {
                group.addTask {
                    try await pool.withConnection { connection in
                        ThreadExitProbe.mark(token)
                        try connection.query("SELECT pg_sleep(0.2)")
                    }
                }
            }
            try await group.waitForAll()
        }
        await pool.shutdown()
        #expect(tokens.allSatisfy(ThreadExitProbe.hasEnded))
    }
}

/// Marks a thread with a thread-local value whose destructor takes a while, and tells
/// afterwards whether that destructor has finished.
enum ThreadExitProbe {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { value in
            // Slow on purpose: a waiter told "done" before the thread ended would look too soon.
            usleep(100_000)
            ThreadExitProbe.ended.withLock { _ = $0.insert(Int(bitPattern: value)) }
        }
        precondition(result == 0, "pthread_key_create failed")
        return key
    }()
    private static let ended = Mutex<Set<Int>>([])
    private static let lastToken = Atomic<Int>(0)

    static func newToken() -> Int { lastToken.add(1, ordering: .relaxed).newValue }

    /// Gives the calling thread the value `token`, ended when the thread ends.
    static func mark(_ token: Int) {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: token))
    }

    static func hasEnded(_ token: Int) -> Bool { ended.withLock { $0.contains(token) } }
}
