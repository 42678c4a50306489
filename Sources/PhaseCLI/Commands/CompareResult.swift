import Cutover
import CutoverPostgres

/// `phase compare`'s result: the counts, then one line per disagreeing column of a row.
struct CompareResult: CommandResult {
    let report: ComparisonReport

    /// Text the application wrote, as the terminal may show it: escaped, cut after 255 characters.
    private static func shown(_ text: String) -> String {
        DisplayText.unquoted(text, limit: 255)
    }

    /// `(id) = (42)`, as PostgreSQL names a key, or the key's hash.
    private func key(_ disagreement: ComparisonReport.Disagreement) -> String {
        guard let key = disagreement.key else { return "sha256:" + (disagreement.keyHash ?? "") }
        return "(\(report.keyColumns.joined(separator: ", "))) = (\(key.map(Self.shown).joined(separator: ", ")))"
    }

    private static func value(_ value: String?) -> String {
        value.map { DisplayText.quoted($0, limit: 255) } ?? "NULL"
    }

    var text: String {
        let read = report.isSample ? "rows sampled from" : "rows of"
        var lines = ["compared \(report.compared) of \(report.sampled) \(read) \(report.table) (\(report.notConverted) not converted yet)"]
        for disagreement in report.listed {
            var line = "disagreement: key \(key(disagreement)), column \(disagreement.column)"
            if report.showsValues {
                let side = disagreement.direction == .up ? "legacy" : "modern"
                line += ": from the \(side) columns \(Self.value(disagreement.expected)), stored \(Self.value(disagreement.stored))"
            }
            lines.append(line)
        }
        if report.unlistedRows > 0 { lines.append("\(report.unlistedRows) more disagreeing rows not listed") }
        if report.isAgreeing {
            lines.append("no disagreement")
        } else {
            let rows = report.disagreeingRows == 1 ? "1 row disagrees" : "\(report.disagreeingRows) rows disagree"
            lines.append("\(rows) in \(report.disagreements) columns" + (report.showsValues ? "" : " (values hidden; --show-values prints them)"))
        }
        return lines.joined(separator: "\n")
    }

    var json: JSONResult {
        ["table": .string(report.table), "keyColumns": .array(report.keyColumns.map(JSONResult.string)),
         "sample": .bool(report.isSample), "sampled": .integer(report.sampled), "compared": .integer(report.compared),
         "notConverted": .integer(report.notConverted), "disagreeingRows": .integer(report.disagreeingRows),
         "disagreements": .integer(report.disagreements), "unlistedRows": .integer(report.unlistedRows),
         "valuesShown": .bool(report.showsValues), "keysHidden": .bool(report.hidesKeys),
         "listed": .array(report.listed.map { disagreement in
             let key: JSONResult = disagreement.key.map { values in
                 .object(Dictionary(uniqueKeysWithValues: zip(report.keyColumns, values.map(JSONResult.string))))
             } ?? .null
             return ["key": key, "keyHash": disagreement.keyHash.map(JSONResult.string) ?? .null,
                     "column": .string(disagreement.column), "direction": .string(disagreement.direction.rawValue),
                     "expected": disagreement.expected.map(JSONResult.string) ?? .null,
                     "stored": disagreement.stored.map(JSONResult.string) ?? .null]
         })]
    }
}
