import Testing
import PostgresClient
@Test func v() { #expect(PGProbe.version() > 0) }
