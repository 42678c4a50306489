import Synchronization

/// Instances of README.md's ``OrderService`` at work on a few shared orders, each moving an order
/// on to its next status on the revision it read, and the log of every save acknowledged.
///
/// Each instance reads an order, saves its next status (`new`, `paid`, `shipped`, `new`, …) with
/// a new operation ID, expecting the revision it read, and on a conflict reads again. Every save
/// acknowledged is logged with when it started and ended, so that the test can tell which path
/// the fleet was on for the whole of it; anything else than a save or a conflict is a failure,
/// which stops the instance.
final class OrderServiceWorkload: Sendable {
    /// One save the service acknowledged.
    struct Save: Sendable {
        var instance: String
        var operationID: String
        var order: Int64
        var expected: Int64
        var revision: Int64
        var status: OrderStatus
        var started: ContinuousClock.Instant
        var ended: ContinuousClock.Instant
    }

    private struct State {
        var saves: [Save] = []
        var conflicts = 0
        var failures: [String] = []
        var isRunning = true
    }

    /// The orders the instances share.
    let orders: [Int64]
    private let state = Mutex(State())

    init(orders: [Int64]) {
        self.orders = orders
    }

    /// Every save acknowledged so far.
    var saves: [Save] { state.withLock { $0.saves } }

    /// How many saves met a conflict.
    var conflicts: Int { state.withLock { $0.conflicts } }

    /// What went wrong, one line each; empty while all is well.
    var failures: [String] { state.withLock { $0.failures } }

    /// Logs a save acknowledged outside ``run(_:instance:)``.
    func record(_ save: Save) {
        state.withLock { $0.saves.append(save) }
    }

    /// Makes every instance stop after the save it is making.
    func stop() {
        state.withLock { $0.isRunning = false }
    }

    /// How many saves `instance` had acknowledged that started after `instant`, and of `order` if given.
    func count(by instance: String? = nil, of order: Int64? = nil, startedAfter instant: ContinuousClock.Instant) -> Int {
        state.withLock { state in
            state.saves.count { ($0.instance == instance || instance == nil) && ($0.order == order || order == nil) && $0.started > instant }
        }
    }

    /// Moves the orders on through `service` until ``stop()``, as `instance`.
    func run(_ service: OrderService, instance: String) async {
        var number = 0
        while state.withLock({ $0.isRunning && $0.failures.isEmpty }) {
            number += 1
            let order = orders[number % orders.count]
            let operationID = "\(instance)-\(number)"
            do {
                let current = try await service.status(of: order)
                // The status after the one read: code 1 → paid, 2 → shipped, 3 → new.
                let next = current.map { OrderStatus.allCases[Int($0.status.code % 3)] } ?? .new
                let expected = current?.revision ?? 0
                let started = ContinuousClock.now
                let change = try await service.setStatus(of: order, to: next, expecting: expected, operationID: operationID)
                let ended = ContinuousClock.now
                switch change {
                case .saved(let revision):
                    record(Save(instance: instance, operationID: operationID, order: order, expected: expected,
                                revision: revision, status: next, started: started, ended: ended))
                case .conflict:
                    state.withLock { $0.conflicts += 1 }
                case .notFound, .operationIDReused:
                    state.withLock { $0.failures.append("\(operationID) on order \(order): \(change)") }
                }
                // A pace, as pgbench's -R gives the plain-SQL writers, so that the steps have the machine too.
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                state.withLock { $0.failures.append("\(operationID) on order \(order): \(error)") }
            }
        }
    }
}
