import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Synchronization
import Testing

/// A client of the primary's WAL sender that keeps the WAL and replays none: `pg_receivewal`,
/// as the backup tools that stream WAL run it. It is no standby: it has no replay lag for a
/// backfill to wait on and no sessions for contract to check.
@Suite("A WAL receiver beside a migration", .serialized, .timeLimit(.minutes(3)))
struct WALReceiverTests {
    /// The primary's row for `applicationName` once its client has replied, waited for, bounded.
    private func replied(_ applicationName: String, on connection: PostgresConnection) throws -> StandbyReplication {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let rows = try StandbyReplication.list(upstream: "primary", on: connection)
            if let row = rows.first(where: { $0.applicationName == applicationName && $0.replyAge != nil }) { return row }
            guard ContinuousClock.now < deadline else {
                throw PostgresError(code: .unexpectedResponse, message: "\(applicationName) never replied: \(rows.map(\.name))")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    @Test("pg_receivewal is reported as what it is: the backfill does not wait on it and contract does not ask to inspect it")
    func receiverIsNoStandby() async throws {
        let primary = try await EphemeralCluster.start()
        defer { primary.stop() }
        let receiver = try primary.startWALReceiver(applicationName: "wal-archive")
        defer { receiver.stop() }
        try await onThread {
            let connection = try PostgresConnection(configuration: primary.configuration())
            // WAL to receive, so that it has replied about some.
            try connection.execute(unsafeSQL: "CREATE TABLE written AS SELECT g FROM generate_series(1, 10000) AS g")
            let row = try replied("wal-archive", on: connection)
            #expect(row.isVisible)
            #expect(row.replayPosition == nil)
            #expect(row.replaysNothing)
            #expect(!row.isStandby)
            #expect(ReplicationText.replayLag(of: row) == "none: it replays no WAL (pg_receivewal, or a backup tool streaming WAL)")

            // The backfill's lag ceiling: nothing to wait on, and no word of a role that may not see it.
            let said = Mutex<[String]>([])
            let monitor = StandbyLagMonitor(ceiling: ReplicaLagCeiling(maximum: .seconds(1))) { line in said.withLock { $0.append(line) } }
            #expect(try monitor.measure(on: connection).isEmpty)
            #expect(!monitor.sawStandbys)
            #expect(said.withLock { $0 } == [])

            // Contract's check of the standbys: listed, not in its way.
            let survey = try StandbySurvey.take(primary: connection, options: StandbyOptions())
            let node = try #require(survey.nodes.first)
            #expect(survey.nodes.count == 1)
            #expect(node.reported?.applicationName == "wal-archive")
            #expect(!node.blocksContract)
            #expect(node.problem == "is not a standby: it keeps the WAL and replays none, so it has no sessions for contract to check")
            let check = PhaseRunner.standbysInspected(survey)
            #expect(check.isPassed)
            #expect(check.observed == "no standby; not standbys, as they replay no WAL: wal-archive (127.0.0.1)")
        }
    }

    @Test("a standby that has not replied since it connected is a standby whose lag is not known yet, and one the role may not see is hidden")
    func unrepliedAndHiddenStandbys() {
        var row = StandbyReplication(pid: 1, applicationName: "replica-a", clientAddress: "10.0.0.7", state: "startup",
                                     syncState: "async", replayPosition: nil, lagBytes: nil, replayLag: nil, replyAge: nil,
                                     upstream: "primary")
        #expect(row.isStandby)
        #expect(!row.replaysNothing)
        #expect(ReplicationText.replayLag(of: row) == "not reported yet: no reply since it connected")

        row.state = nil
        row.syncState = nil
        #expect(row.isStandby)
        #expect(!row.replaysNothing)
        #expect(ReplicationText.replayLag(of: row) == "hidden from this role (grant it pg_monitor)")

        row = StandbyReplication(pid: 2, applicationName: "replica-b", clientAddress: "10.0.0.8", state: "streaming",
                                 syncState: "async", replayPosition: WALPosition(text: "0/3000060"), lagBytes: 0,
                                 replayLag: nil, replyAge: .milliseconds(200), upstream: "primary")
        #expect(row.isStandby)
        #expect(!row.replaysNothing)
        #expect(ReplicationText.replayLag(of: row) == "0ms (caught up)")
    }
}
