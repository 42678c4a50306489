import CutoverTestSupport
import Foundation
import Testing

/// What applications wrote into the control schema (registrations, outcome counts) reaches the
/// operator as data: read defensively, summed without overflow, and printed with its control
/// characters visible. The rows are written as the administrator, as a control schema of
/// version 3 let any application write them.
@Suite("phase reads what applications wrote as data", .timeLimit(.minutes(3)))
struct ApplicationWrittenDataTests {
    /// Whether `text` holds a control character other than a line feed.
    private func hasRawControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" }
    }

    @Test func malformedAndHostileRegistrationsAreListedEscapedAndHoldUpTheSwitch() async throws {
        let db = try await WorkflowDatabase.make("app_data_readers")
        #expect(try await db.phase("init").status == 0)
        #expect(try await db.phase("expand").status == 0)
        try await db.sql { try $0.execute(unsafeSQL: """
            INSERT INTO cutover.readers (instance_id, application_name, application_version, formats) VALUES
                ('web-1', 'web', '4.0', ARRAY['v1', 'v2']),
                ('i4', 'web', '1', ARRAY[NULL, 'v2']),
                ('i5', 'web', '1', ARRAY[ARRAY['v1'], ARRAY['v2']]),
                ('i6', 'web', '1', ARRAY[repeat('v', 100000)]),
                ('evil' || chr(27) || ']0;owned' || chr(7), 'web' || chr(27) || '[2J', '1' || chr(155) || '31m', ARRAY['v1']);
            """) }

        let listed = try await db.phase("readers")
        #expect(listed.status == 0, "\(listed.diagnostics)")
        #expect(!hasRawControl(listed.output))
        let lines = listed.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines.contains { $0.hasPrefix(#"live  evil\u{1B}]0;owned\u{7}  web\u{1B}[2J 1\u{9B}31m  reads v1  last seen "#) })
        for id in ["i4", "i5", "i6"] {
            #expect(lines.contains { $0.hasPrefix("live  \(id)  web 1  unreadable (formats are not 1 to 16 format codes)") },
                    "\(id): \(lines)")
        }
        #expect(lines.contains { $0.hasPrefix("live  web-1  web 4.0  reads v1,v2") })
        #expect(listed.output.count < 2000, "a 100,000-character format is not printed")

        let json = try await db.phase("--format", "json", "readers")
        #expect(json.status == 0)
        #expect(!hasRawControl(json.output))
        #expect(json.output.contains(#""instanceID": "evil\u001b]0;owned\u0007""#))
        #expect(json.output.contains(#"1\u009b31m"#))

        // Status and the switch's checks read the same rows: they judge them, they do not fail.
        let status = try await db.phase("status")
        #expect(status.status == 0, "\(status.diagnostics)")
        #expect(!hasRawControl(status.output))
        let check = try await db.phase("check", "switch")
        #expect(check.status == 3, "\(check.output)\(check.diagnostics)")
        #expect(!hasRawControl(check.output))
        #expect(check.output.contains("FAILED live readers understand v2: expected every live reader lists v2, observed 4 of 5 live lack v2: "))
        #expect(check.output.contains(#"evil\u{1B}]0;owned\u{7} (web\u{1B}[2J 1\u{9B}31m: v1)"#))
        let switched = try await db.phase("switch", "modern")
        #expect(switched.status == 3)
        #expect(!hasRawControl(switched.diagnostics))
        #expect(switched.diagnostics.contains(#"evil\u{1B}]0;owned\u{7}"#))
        #expect(try await db.phaseName() == "expanded")
    }

    @Test func compareNamesARowWhateverItsKeyHolds() async throws {
        let db = try await WorkflowDatabase.make("app_data_compare", rows: 20)
        for arguments in [["init"], ["expand"], ["switch", "modern", "--force-readers"], ["backfill"]] {
            #expect(try await db.phase(arguments).status == 0)
        }
        // The sync trigger would carry the document's new title into `title`: off while the
        // disagreement is planted.
        try await db.sql { try $0.execute(unsafeSQL: """
            INSERT INTO drafts (id, title, revision) VALUES ('evil' || chr(10) || 'mismatch: none' || chr(27) || '[2J', 'Legacy', 1);
            ALTER TABLE drafts DISABLE TRIGGER USER;
            UPDATE drafts SET document = jsonb_set(document, '{title}', '"Modern"') WHERE id LIKE 'evil%';
            ALTER TABLE drafts ENABLE TRIGGER USER;
            """) }
        let compared = try await db.phase("compare")
        #expect(compared.status == 3, "\(compared.output)\(compared.diagnostics)")
        #expect(!hasRawControl(compared.output))
        #expect(compared.output.contains(#"disagreement: key (id) = (evil\u{A}mismatch: none\u{1B}[2J), column document"# + "\n"
                                         + #"disagreement: key (id) = (evil\u{A}mismatch: none\u{1B}[2J), column title"# + "\n"), "\(compared.output)")
        #expect(!compared.output.contains("\nmismatch: none"))
    }

    @Test func observeJudgesTheLargestStoredCountsWithoutOverflowing() async throws {
        let db = try await WorkflowDatabase.make("app_data_observe")
        for arguments in [["init"], ["expand"], ["switch", "modern", "--force-readers"]] {
            #expect(try await db.phase(arguments).status == 0)
        }
        try await db.sql { try $0.execute(unsafeSQL: """
            INSERT INTO cutover.outcome_log VALUES
                (date_trunc('minute', now()), 'modern', 'committed', 9223372036854775807),
                (date_trunc('minute', now()), 'modern', 'error', 9223372036854775807),
                (date_trunc('minute', now()) + interval '1 year', 'modern', 'error', 9223372036854775807);
            """) }
        let judged = try await db.phase("--format", "json", "observe")
        #expect(judged.status == 3, "\(judged.output)\(judged.diagnostics)")
        #expect(judged.output.contains(#""saves": 9223372036854775807"#))
        #expect(judged.output.contains(#""errors": 9223372036854775807"#))

        let followed = try await db.phase("observe", "--follow", "--interval", "1s", "--auto-rollback")
        #expect(followed.status == 0, "\(followed.output)\(followed.diagnostics)")
        #expect(followed.output.contains("threshold crossed: modern error rate 100.0% is above 1.0%"))
        #expect(followed.output.contains("switched back to legacy automatically"))
        #expect(try await db.phaseName() == "expanded")
    }
}
