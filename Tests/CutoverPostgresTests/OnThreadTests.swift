import CutoverTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// The tests' way to run blocking work: on a thread of its own, in the calling test.
@Suite("onThread")
struct OnThreadTests {
    /// The body runs on its own thread, and Swift Testing still knows the test it belongs to, so
    /// an `#expect` there is reported against that test.
    @Test func theBodyRunsOnItsOwnThreadInTheCallingTest() async throws {
        let (thread, test) = try await onThread { (Thread.current.name ?? "", Test.current?.name) }
        // Linux keeps the first 15 bytes of a thread's name.
        #expect(thread == "cutover-test-bl")
        #expect(test != nil && test == Test.current?.name)
    }

    /// More bodies than the cooperative pool has threads block at once and all go on: each
    /// waits until every other has started, which on the pool's few threads would never happen.
    @Test func bodiesThatBlockDoNotWaitForEachOthersThreads() async throws {
        let bodies = ProcessInfo.processInfo.activeProcessorCount + 2
        let arrived = Arrivals()
        let released = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<bodies {
                group.addTask {
                    try await onThread { () -> Bool in
                        arrived.count.add(1, ordering: .sequentiallyConsistent)
                        // Blocks its thread until all have arrived; the bound turns a hang into a failure.
                        let deadline = ContinuousClock.now + .seconds(60)
                        while arrived.count.load(ordering: .sequentiallyConsistent) < bodies {
                            guard ContinuousClock.now < deadline else { return false }
                            usleep(1_000)
                        }
                        return true
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(released == Array(repeating: true, count: bodies))
    }

    private final class Arrivals: Sendable {
        let count = Atomic<Int>(0)
    }
}
