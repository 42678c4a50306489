// README "Your own table" begins
import Cutover
import CutoverPostgres
import PostgresClient

/// An order's status: 'new', 'paid' or 'shipped' in `status`, 1, 2 or 3 in `status_code`.
enum OrderStatus: String, Sendable, Hashable, CaseIterable {
    case new, paid, shipped

    var code: Int64 { Int64(Self.allCases.firstIndex(of: self)! + 1) }

    init?(code: Int64) {
        guard (1...3).contains(code) else { return nil }
        self = Self.allCases[Int(code) - 1]
    }
}

/// `orders` as examples/orders-status-code migrates it: `status text` becomes `status_code smallint`.
enum Orders: RecordEntity {
    static let planName = "orders-status-code"
    static let keyColumns = [RecordKeyColumn(name: "id", kind: .bigint)]

    static func encodeContent(_ status: OrderStatus, into encoder: inout CanonicalEncoder) {
        encoder.append(status.rawValue)
    }

    static func violation(of status: OrderStatus) -> SaveViolation? { nil }

    static let legacy = RecordFormatCodec<OrderStatus>(
        columns: ["status"],
        encode: { ["status": .text($0.rawValue)] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .text(let text) = row["status"] else { throw .missingColumn("status") }
            guard let status = OrderStatus(rawValue: text) else { throw .unexpectedValue(column: "status") }
            return status
        })

    static let modern = RecordFormatCodec<OrderStatus>(
        columns: ["status_code"],
        encode: { ["status_code": .integer($0.code)] },
        decode: { (row) throws(RecordDecodingError) in
            guard case .integer(let code) = row["status_code"] else { throw .missingColumn("status_code") }
            guard let status = OrderStatus(code: code) else { throw .unexpectedValue(column: "status_code") }
            return status
        })
}

/// What became of a change of an order's status.
enum StatusChange: Equatable {
    /// Saved now, or saved before under this operation ID (a replay): the order's new revision.
    case saved(revision: Int64)
    /// The order is no longer at the revision expected: read it again and decide again.
    case conflict(currentRevision: Int64)
    /// There is no such order.
    case notFound
    /// This operation ID was already used for another change.
    case operationIDReused
}

/// One instance of the order service: its store, its router following the plan's writer path,
/// and its registration as a reader of both formats.
final class OrderService: Sendable {
    let pool: PostgresPool
    let store: PostgresRecordStore<Orders>
    let fleet: FleetWriterPath
    let router: RecordRouter<Orders>
    let registration: ReaderRegistration

    init(databaseURL: String, instanceID: String) async throws {
        let configuration = PostgresConfiguration(connectionString: databaseURL)
        pool = PostgresPool(configuration: configuration, maximumConnections: 4)
        store = try await PostgresRecordStore<Orders>(pool: pool)
        fleet = try await FleetWriterPath.start(configuration: configuration, plan: Orders.planName)
        router = RecordRouter(legacy: RecordAdapter(storage: store, path: .legacy),
                              modern: RecordAdapter(storage: store, path: .modern),
                              following: fleet)
        registration = try await ReaderRegistration(pool: pool, plan: Orders.planName, instanceID: instanceID,
                                                    applicationName: "orders", applicationVersion: "2.0.0",
                                                    reading: [.legacy, .modern], following: fleet)
    }

    /// The order's status and revision; nil when there is no such order.
    func status(of order: Int64) async throws -> (status: OrderStatus, revision: Int64)? {
        guard let stored = try await store.record(RecordKey(.bigint(order))) else { return nil }
        return (try RecordReader<Orders>(as: .modern).read(stored.columns), stored.revision)
    }

    /// Sets the order's status if it is still at `revision` (0 creates the order).
    ///
    /// `operationID` names this change, say the client's idempotency key: the same on every retry.
    func setStatus(of order: Int64, to status: OrderStatus, expecting revision: Int64,
                   operationID: String) async throws -> StatusChange {
        let request = SaveRequest<Orders>(operationScope: "shop-1", operationID: operationID,
                                          key: RecordKey(.bigint(order)), expectedRevision: revision, content: status)
        var attempt = 1
        while true {
            do {
                return .saved(revision: try await router.save(request).revision)
            } catch SaveFailure.conflict(_, let current) {
                return .conflict(currentRevision: current)
            } catch SaveFailure.notFound {
                return .notFound
            } catch SaveFailure.operationConflict {
                return .operationIDReused
            } catch SaveFailure.outcomeUnknown where attempt < 5 {
                // The connection broke around COMMIT: the same request with the same operation ID
                // replays what committed, or saves it now if nothing did.
            } catch RecordStoreError.lockTimeout where attempt < 5 {
                // Another transaction held the row longer than the lock timeout; nothing was saved.
            }
            attempt += 1
        }
    }

    /// Leaves the fleet and closes the connections.
    func stop() async throws {
        try await registration.stop()
        await fleet.stop()
        try await store.outcomes.close()
        await pool.shutdown()
    }
}
// README "Your own table" ends
