import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("LISTEN and NOTIFY")
struct ListenerTests {
    static let database = Task { try await TestPostgres.database("listener") }

    @Test(.timeLimit(.minutes(3)))
    func notificationsArriveAndSurviveATerminatedBackend() async throws {
        let database = try await Self.database.value
        let sender = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        let listener = PostgresListener(configuration: database.configuration(applicationName: "listener-under-test"),
                                        channels: ["cutover_test_channel"])
        var events = listener.events.makeAsyncIterator()
        #expect(await events.next() == .listening(isReconnect: false))

        try await sender.withConnection { try $0.query("SELECT pg_notify(\("cutover_test_channel"), \("first"))") }
        guard case .notification(let first)? = await events.next() else { Issue.record("no first notification"); return }
        #expect(first.channel == "cutover_test_channel")
        #expect(first.payload == "first")

        let terminated = try await sender.withConnection { connection in
            try connection.query("""
                SELECT count(pg_terminate_backend(pid, 5000)) AS n FROM pg_stat_activity
                WHERE application_name = 'listener-under-test'
                """)[0].decode(Int.self, "n")
        }
        #expect(terminated == 1)
        guard case .connectionLost? = await events.next() else { Issue.record("the lost connection was not reported"); return }
        #expect(await events.next() == .listening(isReconnect: true))

        try await sender.withConnection { try $0.query("SELECT pg_notify(\("cutover_test_channel"), \("second"))") }
        guard case .notification(let second)? = await events.next() else { Issue.record("no second notification"); return }
        #expect(second.payload == "second")

        listener.stop()
        #expect(await events.next() == nil)
        await sender.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func onlyTheChannelsListenedToAreDelivered() async throws {
        let database = try await Self.database.value
        let sender = PostgresPool(configuration: database.configuration(), maximumConnections: 1)
        let listener = PostgresListener(configuration: database.configuration(), channels: ["Mixed Case", "plain"])
        var events = listener.events.makeAsyncIterator()
        #expect(await events.next() == .listening(isReconnect: false))
        try await sender.withConnection { connection in
            try connection.query("SELECT pg_notify(\("other"), \("ignored"))")
            try connection.query("SELECT pg_notify(\("Mixed Case"), \("one"))")
            try connection.query("SELECT pg_notify(\("plain"), \("two"))")
        }
        var payloads: [String] = []
        while payloads.count < 2, let event = await events.next() {
            if case .notification(let note) = event { payloads.append(note.channel + ":" + note.payload) }
        }
        #expect(payloads == ["Mixed Case:one", "plain:two"])
        listener.stop()
        await sender.shutdown()
    }
}
