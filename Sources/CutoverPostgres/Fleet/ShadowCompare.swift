import Cutover
import PostgresClient

/// A sample of drafts read through both readers, compared field by field, with no side effect.
public struct ShadowComparison: Sendable, Equatable {
    /// One field on which the two readers disagree, or a draft one reader cannot read.
    public struct Mismatch: Sendable, Equatable {
        /// The draft.
        public var draftID: String
        /// The field (`title`), or `document` when the v2 reader cannot read it at all.
        public var field: String
        /// What the legacy reader sees.
        public var legacyValue: String?
        /// What the modern reader sees, or why it cannot read the draft.
        public var modernValue: String?
    }

    /// Drafts read.
    public var sampled: Int
    /// Drafts that held both representations and were compared.
    public var compared: Int
    /// Drafts that held v1 only (not yet backfilled) and so had nothing to compare.
    public var legacyOnly: Int
    /// Every disagreement found.
    public var mismatches: [Mismatch]
}

/// Reads drafts through the legacy (v1) and the modern (v2) reader and compares what each sees.
///
/// The legacy reader reads the `title` column; the modern reader decodes the `document`. Only
/// the fields both formats carry (the title) are compared; a document the modern reader cannot
/// decode is a mismatch of its own. It only reads.
public enum ShadowCompare {
    /// Compares a random sample of up to `sample` drafts.
    public static func compare(sample: Int, on connection: PostgresConnection) throws -> ShadowComparison {
        let rows = try connection.query("""
            SELECT d.id, to_jsonb(d) ->> 'title' AS title, nullif(to_jsonb(d) -> 'document', 'null'::jsonb)::text AS document
              FROM drafts d ORDER BY random() LIMIT \(sample)
            """)
        var result = ShadowComparison(sampled: rows.count, compared: 0, legacyOnly: 0, mismatches: [])
        for row in rows {
            let id = try row.decode(String.self, "id")
            let title = try row.decode(String?.self, "title")
            guard let document = try row.decode(String?.self, "document") else {
                result.legacyOnly += 1
                continue
            }
            guard let title else { continue }  // contracted: the legacy reader has nothing to read
            result.compared += 1
            do {
                let modern = try DraftCodecRegistry.standard.decode(EncodedDraft(format: .v2, bytes: Array(document.utf8)), draftID: id)
                if modern.title != title {
                    result.mismatches.append(.init(draftID: id, field: "title", legacyValue: title, modernValue: modern.title))
                }
            } catch {
                result.mismatches.append(.init(draftID: id, field: "document", legacyValue: title, modernValue: "\(error)"))
            }
        }
        return result
    }
}
