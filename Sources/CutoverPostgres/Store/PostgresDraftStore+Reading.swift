import Cutover
import PostgresClient

extension PostgresDraftStore {
    /// A draft as stored now: its v2 document when it has one (the format named by the
    /// document's `version`), otherwise its v1 title; nil when there is no such draft.
    ///
    /// Works at every phase: the columns the table has are read through `to_jsonb`, so a
    /// missing `document` (before expand) or `title` (after contract) is simply absent.
    public func draft(id draftID: String) async throws -> StoredDraft? {
        let rows = try await pool.withConnection { connection in
            try connection.query("""
                SELECT d.revision, to_jsonb(d) ->> 'title' AS title,
                       nullif(to_jsonb(d) -> 'document', 'null'::jsonb)::text AS document,
                       to_jsonb(d) -> 'document' ->> 'version' AS version
                  FROM drafts d WHERE d.id = \(draftID)
                """)
        }
        guard let row = rows.first else { return nil }
        let revision = try row.decode(Int64.self, "revision")
        if let document = try row.decode(String?.self, "document") {
            let version = try row.decode(String?.self, "version") ?? "?"
            return StoredDraft(draftID: draftID, revision: revision,
                               encoded: EncodedDraft(format: DraftFormat(rawValue: "v" + version), bytes: Array(document.utf8)))
        }
        guard let title = try row.decode(String?.self, "title") else {
            throw DraftDecodingError.unsupportedFormat(DraftFormat(rawValue: "none"), draftID: draftID,
                                                       supported: DraftCodecRegistry.standard.supportedFormats)
        }
        return StoredDraft(draftID: draftID, revision: revision, encoded: EncodedDraft(format: .v1, bytes: Array(title.utf8)))
    }

    /// A draft's content and revision as a modern reader sees it: a v1 draft reads with the
    /// documented defaults for the fields v1 lacks.
    ///
    /// - Throws: ``DraftDecodingError`` naming the draft when its stored data is malformed or
    ///   of a format this build does not know.
    public func read(id draftID: String) async throws -> (content: DraftContent, revision: Int64)? {
        guard let stored = try await draft(id: draftID) else { return nil }
        return (try DraftCodecRegistry.standard.decode(stored.encoded, draftID: draftID), stored.revision)
    }
}
