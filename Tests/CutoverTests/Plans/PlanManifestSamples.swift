import Cutover
import Testing

/// Manifests the plan tests start from, and ways to edit and read them.
enum PlanManifestSamples {
    /// The manifest of the format's documentation, every kind of step and file included.
    static let full = #"""
        {
          "format": 1,
          "name": "drafts",
          "table": "drafts",
          "legacyApplicationPattern": "legacy-%",
          "modernWriterWindow": "10m",
          "steps": [
            {"kind": "expand", "apply": ["expand.sql", {"file": "expand_index.sql", "transaction": false}],
             "revert": ["expand_revert.sql"],
             "checks": [{"name": "legacy table present",
                         "sql": "SELECT count(*) FROM pg_tables WHERE tablename = 'drafts'",
                         "expect": "= 1", "message": "the drafts table must exist"}]},
            {"kind": "switch"},
            {"kind": "backfill", "batch": "backfill_batch.sql", "remaining": "backfill_remaining.sql", "batchSize": 1000},
            {"kind": "contract", "apply": ["contract_constraint.sql", "contract_validate.sql", "contract_drop.sql"],
             "checks": [{"name": "no v1-only rows", "sqlFile": "checks/v1_only.sql", "expect": "= 0",
                         "message": "backfill must finish first"}]}
          ]
        }
        """#

    /// The smallest valid manifest: expand, backfill and contract, no optional key.
    static let minimal = #"""
        {"format": 1, "name": "n", "table": "t", "modernWriterWindow": "0s",
         "steps": [{"kind": "expand", "apply": ["a.sql"], "revert": ["r.sql"]},
                   {"kind": "backfill", "batch": "b.sql", "remaining": "n.sql"},
                   {"kind": "contract", "apply": ["c.sql"]}]}
        """#

    /// A step of each kind with one file each and no checks, for building manifests step by step.
    static let expandStep = #"{"kind": "expand", "apply": ["a.sql"], "revert": ["r.sql"]}"#
    static let switchStep = #"{"kind": "switch"}"#
    static let backfillStep = #"{"kind": "backfill", "batch": "b.sql", "remaining": "n.sql"}"#
    static let contractStep = #"{"kind": "contract", "apply": ["c.sql"]}"#

    /// A manifest whose `steps` value is `steps`, written as is.
    static func manifest(stepsValue steps: String) -> String {
        #"{"format": 1, "name": "n", "table": "t", "modernWriterWindow": "0s", "steps": \#(steps)}"#
    }

    /// A manifest with these steps, in this order.
    static func manifest(steps: [String]) -> String {
        manifest(stepsValue: "[" + steps.joined(separator: ", ") + "]")
    }

    /// `manifest` with its one occurrence of `target` replaced; records an issue if it occurs other than once.
    static func editing(
        _ manifest: String = full, replacing target: String, with replacement: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        let pieces = manifest.split(separator: target, omittingEmptySubsequences: false)
        #expect(pieces.count == 2, "\(String(reflecting: target)) should occur once", sourceLocation: sourceLocation)
        return pieces.joined(separator: replacement)
    }

    /// The plan `manifest` holds, or the error's description.
    static func read(_ manifest: String, file: String = "plan.json") -> Result<MigrationPlan, PlanManifestError> {
        read(Array(manifest.utf8), file: file)
    }

    /// The plan `bytes` hold, or the error.
    static func read(_ bytes: [UInt8], file: String = "plan.json") -> Result<MigrationPlan, PlanManifestError> {
        Result { () throws(PlanManifestError) in try MigrationPlan(manifest: bytes, file: file) }
    }

    /// The one-line refusal of `manifest`, or a note that it was accepted.
    static func refusal(of manifest: String) -> String {
        refusal(of: Array(manifest.utf8))
    }

    /// The one-line refusal of `bytes`, or a note that they were accepted.
    static func refusal(of bytes: [UInt8]) -> String {
        switch read(bytes) {
        case .success: "accepted"
        case .failure(let error): error.description
        }
    }
}

extension Result {
    /// The error, or nil on success.
    var failure: Failure? {
        guard case .failure(let error) = self else { return nil }
        return error
    }
}
