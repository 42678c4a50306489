import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The reader registry is kept per plan (control schema version 6): an instance registers with
/// each plan whose data it reads, each plan lists and follows only its own registrations, and the
/// upgrade from version 5 keeps every registration as a drafts one.
@Suite("Per-plan reader registry")
struct PerPlanReaderRegistryTests {
    /// The registry as `plan/instance formats`, sorted.
    private static func registrations(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT plan || '/' || instance_id || ' ' || array_to_string(formats, ',') AS entry FROM cutover.readers ORDER BY 1
            """).map { try $0.decode(String.self, "entry") }
    }

    /// The epochs reported as `plan/instance epoch`, sorted.
    private static func epochs(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("SELECT plan || '/' || instance_id || ' ' || epoch AS entry FROM cutover.reader_epochs ORDER BY 1")
            .map { try $0.decode(String.self, "entry") }
    }

    /// Everything the upgrade must keep of a registration: its ID, names, formats, secret and
    /// times; of `plan`'s registrations, or of every one when `plan` is nil (version 5 has no plan).
    private static func fingerprints(_ connection: PostgresConnection, plan: String? = nil) throws -> [String] {
        let columns = "concat_ws(' ', instance_id, application_name, application_version, formats::text, "
            + "encode(token_sha256, 'hex'), registered_at, last_seen_at) AS entry"
        let rows = if let plan {
            try connection.query("SELECT \(unsafeRaw: columns) FROM cutover.readers WHERE plan = \(plan) ORDER BY instance_id")
        } else {
            try connection.query("SELECT \(unsafeRaw: columns) FROM cutover.readers ORDER BY instance_id")
        }
        return try rows.map { try $0.decode(String.self, "entry") }
    }

    @Test(.timeLimit(.minutes(3)))
    func aVersion5RegistryMovesToTheDraftsPlanWithEveryRegistrationAndItsCallsKeepWorkingThere() async throws {
        try await Roles.withRoles("readers_from_5") { roles in
            try await roles.installAsMigrator(version: 5, schema: ControlSchemaVersion5.schema,
                                              grants: ControlSchemaVersion5.grants) { migrator in
                try migrator.execute(unsafeSQL: "INSERT INTO cutover.migration_state (plan) VALUES ('drafts'), ('orders')")
            }
            // Version 5's registry: one registration per instance, whatever plans it follows.
            try await roles.asApplication { app in
                try app.query("SELECT cutover.reader_heartbeat('web-1', 'web', '4.2.0', ARRAY['v1', 'v2'], 'secret of web-1 ....')")
                try app.query("SELECT cutover.reader_heartbeat('report-1', 'reports', '3.9.1', ARRAY['v1'], 'secret of report-1 .')")
                try app.query("SELECT cutover.reader_follows('web-1', 'secret of web-1 ....', 'drafts', 0)")
                try app.query("SELECT cutover.reader_follows('web-1', 'secret of web-1 ....', 'orders', 0)")
            }
            let before = try await roles.admin { try Self.fingerprints($0) }
            #expect(before.count == 2)
            #expect(try await roles.upgradeAsMigrator() == .installed(from: 5))

            // Every registration is the drafts plan's now, unchanged; the instance that reported
            // following orders is registered with orders too, so that its report stays its own.
            let (moved, drafts, orders, epochs) = try await roles.admin { connection in
                (try Self.registrations(connection), try Self.fingerprints(connection, plan: "drafts"),
                 try Self.fingerprints(connection, plan: "orders"), try Self.epochs(connection))
            }
            #expect(moved == ["drafts/report-1 v1", "drafts/web-1 v1,v2", "orders/web-1 v1,v2"])
            #expect(drafts == before)
            #expect(orders == before.filter { $0.hasPrefix("web-1 ") })
            #expect(epochs == ["drafts/web-1 0", "orders/web-1 0"])

            // Version 5's calls go on working, as the drafts plan's: a refresh with the same
            // secret, a leave; and the secret still guards the moved registration.
            let (left, foreign) = try await roles.asApplication { app in
                try app.query("SELECT cutover.reader_heartbeat('web-1', 'web', '4.3.0', ARRAY['v1', 'v2'], 'secret of web-1 ....')")
                let left = try app.query("SELECT cutover.reader_leave('report-1', 'secret of report-1 .') AS removed")[0]
                    .decode(Bool.self, "removed")
                let foreign = RolesTests.failure {
                    try app.execute(unsafeSQL: "SELECT cutover.reader_heartbeat('web-1', 'web', '9', ARRAY['v1'], 'another process secret')")
                }?.sqlState
                return (left, foreign)
            }
            let refreshed = try await roles.admin { connection in
                try ReaderRegistry.list(plan: "drafts", on: connection).map { "\($0.instanceID) \($0.applicationVersion)" }
            }
            #expect(refreshed == ["web-1 4.3.0"])
            #expect(left)
            #expect(foreign == .uniqueViolation)
            // The plan's own calls: the same instance ID is free in another plan, and each plan lists its own.
            let follows = try await roles.asApplication { app in
                try ReaderRegistry.heartbeat(plan: "orders", instanceID: "report-1", applicationName: "reports", applicationVersion: "4.0.0",
                                             formats: ["v1"], token: "secret of report-1 in orders", on: app)
                return try ReaderRegistry.follows(instanceID: "web-1", token: "secret of web-1 ....", plan: "orders", epoch: 0, on: app)
            }
            #expect(follows)
            let (ordersListed, draftsListed) = try await roles.admin { connection in
                (try ReaderRegistry.list(plan: "orders", on: connection).map(\.instanceID),
                 try ReaderRegistry.list(plan: "drafts", on: connection).map(\.instanceID))
            }
            #expect(ordersListed == ["report-1", "web-1"])
            #expect(draftsListed == ["web-1"])
            let refused = try await roles.asApplication { app in
                [RolesTests.failure { try app.execute(unsafeSQL: "SELECT * FROM cutover.readers") }?.sqlState,
                 RolesTests.failure { try app.execute(unsafeSQL: "DELETE FROM cutover.readers WHERE plan = 'orders'") }?.sqlState,
                 RolesTests.failure {
                     try app.execute(unsafeSQL: "SELECT cutover.reader_heartbeat('', 'web-2', 'web', '1', ARRAY['v2'], 'secret of web-2 ....')")
                 }?.sqlState]
            }
            #expect(refused == [.insufficientPrivilege, .insufficientPrivilege, .invalidParameterValue])

            // Installing again, or running the schema file again, changes nothing.
            let kept = try await roles.admin { try Self.fingerprints($0) }
            #expect(try await roles.reinstallAsMigrator() == .current)
            let reinstalled = try await roles.admin { try Self.fingerprints($0) }
            #expect(reinstalled == kept)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func oneInstanceRegisteredWithTwoPlansIsListedFollowedAndRemovedPerPlan() async throws {
        let db = try await StoreDatabase.make("readers_two_plans", phase: .expanded, poolSize: 2)
        try await db.sql { try $0.execute(unsafeSQL: "INSERT INTO cutover.migration_state (plan, epoch) VALUES ('orders', 3)") }
        let draftsFleet = try await FleetWriterPath.start(configuration: db.database.configuration(applicationName: "drafts-fleet"),
                                                          plan: "drafts", pollInterval: .seconds(600))
        let ordersFleet = try await FleetWriterPath.start(configuration: db.database.configuration(applicationName: "orders-fleet"),
                                                          plan: "orders", pollInterval: .seconds(600))
        // The same instance ID in two plans is two registrations, not a process holding another's.
        let drafts = try await ReaderRegistration(pool: db.pool, plan: "drafts", instanceID: "web-1", applicationName: "web",
                                                  applicationVersion: "2.0", formats: [.v1, .v2], interval: .seconds(600),
                                                  following: draftsFleet)
        let orders = try await ReaderRegistration(pool: db.pool, plan: "orders", instanceID: "web-1", applicationName: "web",
                                                  applicationVersion: "2.0", formats: [.v1], interval: .seconds(600),
                                                  following: ordersFleet)
        #expect(drafts.instanceID == "web-1" && orders.instanceID == "web-1")
        let (draftsList, ordersList, draftsFollowers, ordersFollowers) = try await db.sql { connection in
            (try ReaderRegistry.list(plan: "drafts", on: connection).map { "\($0.instanceID) \($0.formats)" },
             try ReaderRegistry.list(plan: "orders", on: connection).map { "\($0.instanceID) \($0.formats)" },
             try ReaderRegistry.followers(plan: "drafts", on: connection),
             try ReaderRegistry.followers(plan: "orders", on: connection))
        }
        #expect(draftsList == ["web-1 [\"v1\", \"v2\"]"])
        #expect(ordersList == ["web-1 [\"v1\"]"])
        #expect(draftsFollowers == [FleetMember(instanceID: "web-1", applicationName: "web", isLive: true, epoch: draftsFleet.current.epoch)])
        #expect(ordersFollowers == [FleetMember(instanceID: "web-1", applicationName: "web", isLive: true, epoch: 3)])

        // A registration asked to report another plan's path is refused before it registers.
        await #expect(throws: ReaderRegistryError.followsAnotherPlan(registered: "orders", followed: "drafts")) {
            _ = try await ReaderRegistration(pool: db.pool, plan: "orders", instanceID: "web-2", applicationName: "web",
                                             applicationVersion: "2.0", formats: [.v2], following: draftsFleet)
        }
        // Leaving one plan leaves the other's registration and its report where they are.
        try await orders.stop()
        let (left, kept) = try await db.sql { connection in
            (try ReaderRegistry.list(plan: "orders", on: connection).map(\.instanceID),
             try ReaderRegistry.followers(plan: "drafts", on: connection).map(\.instanceID))
        }
        #expect(left.isEmpty)
        #expect(kept == ["web-1"])
        #expect(try await db.sql { try Self.registrations($0) } == ["drafts/web-1 v1,v2"])
        try await drafts.stop()
        await draftsFleet.stop()
        await ordersFleet.stop()
        await db.close()
    }
}
