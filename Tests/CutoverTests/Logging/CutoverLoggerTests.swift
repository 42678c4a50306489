import Cutover
import CutoverTestSupport
import Synchronization
import Testing

/// The library's logging hook: levels, lazy messages, metadata, and a default that drops all.
@Suite("CutoverLogger")
struct CutoverLoggerTests {
    @Test func recordsBelowTheMinimumLevelAreNeitherBuiltNorHandedOver() {
        let capture = LogCapture()
        let logger = capture.logger(label: "web-1", minimumLevel: .warning)
        let built = Mutex(0)
        func message(_ text: String) -> String {
            built.withLock { $0 += 1 }
            return text
        }
        logger.log(.info, message("a change"))
        logger.log(.debug, message("a detail"), metadata: ["built": message("metadata")])
        logger.log(.warning, message("a failure"))
        logger.log(.error, message("a lasting failure"))
        #expect(capture.records.map(\.message) == ["a failure", "a lasting failure"])
        #expect(capture.records.map(\.level) == [.warning, .error])
        #expect(built.withLock { $0 } == 2)
        #expect(logger.isEnabled(.warning) && !logger.isEnabled(.notice))
    }

    @Test func theDisabledLoggerBuildsNothing() {
        let built = Mutex(false)
        func message() -> String {
            built.withLock { $0 = true }
            return "never"
        }
        CutoverLogger.disabled.log(.critical, message())
        CutoverLogger.disabled.log(.critical, message(), metadata: ["key": message()])
        #expect(!built.withLock { $0 })
        #expect(!CutoverLogger.disabled.isEnabled(.critical))
    }

    @Test func aRecordCarriesTheLoggersMetadataUnderItsOwnAndReadsAsOneLine() throws {
        let capture = LogCapture()
        var logger = capture.logger(label: "web-1")
        logger[metadataKey: "plan"] = "drafts"
        logger[metadataKey: "instanceID"] = "web-1"
        logger.log(.warning, "heartbeat failed", metadata: ["failures": "2", "instanceID": "web-1-3f2a"])
        let record = try #require(capture.records.first)
        #expect(record.metadata == ["plan": "drafts", "instanceID": "web-1-3f2a", "failures": "2"])
        #expect(record.description == "warning: web-1: heartbeat failed (failures=2, instanceID=web-1-3f2a, plan=drafts)")
        #expect(logger[metadataKey: "plan"] == "drafts")
    }

    @Test func levelsAreOrderedAsSwiftLogsAre() {
        #expect(CutoverLogger.Level.allCases == [.trace, .debug, .info, .notice, .warning, .error, .critical])
        #expect(CutoverLogger.Level.allCases.sorted() == CutoverLogger.Level.allCases)
        #expect(CutoverLogger.Level.allCases.map(\.description) == ["trace", "debug", "info", "notice", "warning", "error", "critical"])
    }
}
