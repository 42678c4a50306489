/// Reads a plan manifest's bytes into a ``MigrationPlan``, refusing the first thing that breaks a rule.
///
/// The order of refusals is fixed: size, then JSON syntax, then, object by
/// object in document order, repeated keys, the keys that decide what else
/// is allowed (`format`, a step's `kind`), unknown keys, and each member in the
/// order the format lists them.
enum PlanManifestDecoder {
    private static let rootKeys = ["format", "name", "table", "legacyApplicationPattern", "modernWriterWindow", "steps", "statements"]
    private static let statementKeys = ["name", "application", "sql"]
    private static let fileKeys = ["file", "transaction", "serverVersion"]
    private static let checkKeys = ["name", "sql", "sqlFile", "expect", "message"]
    private static let listCount = 1...PlanLimits.maximumListCount

    static func plan(from bytes: [UInt8]) throws(ManifestFault) -> MigrationPlan {
        let object = try root(from: bytes)
        try requireFormat(PlanLimits.format, of: object)
        return try plan(from: object)
    }

    /// The manifest's root object: refused when too large, not JSON, or not an object without repeated keys.
    static func root(from bytes: [UInt8]) throws(ManifestFault) -> ManifestObject {
        let root = ManifestPath()
        guard bytes.count <= PlanLimits.maximumManifestByteCount else {
            throw ManifestFault(field: root, problem: .tooLarge(byteCount: bytes.count))
        }
        let document: JSONValue
        do {
            // Repeated keys are kept so that they are refused with their JSON path, not a byte offset.
            document = try JSONParser.parse(bytes, allowingRepeatedNames: true)
        } catch {
            throw ManifestFault(field: root, problem: syntaxProblem(error, in: bytes))
        }
        return try ManifestValue(path: root, value: document).object()
    }

    /// The root's `format`, refused unless it is one this version reads.
    ///
    /// The format decides which keys exist, so a newer manifest is refused for its format, not its keys.
    static func format(of object: ManifestObject) throws(ManifestFault) -> Int {
        let format = object["format"]
        let literal = try format.numberLiteral()
        guard let number = PlanLimits.formats.first(where: { String($0) == literal }) else {
            throw format.fault(.unsupportedFormat(found: literal))
        }
        return number
    }

    /// Refuses the root unless its `format` is `expected`.
    static func requireFormat(_ expected: Int, of object: ManifestObject) throws(ManifestFault) {
        let found = try format(of: object)
        guard found == expected else { throw object["format"].fault(.wrongFormat(found: found, expected: expected)) }
    }

    /// The format-1 plan in a root object whose format is read already.
    static func plan(from object: ManifestObject) throws(ManifestFault) -> MigrationPlan {
        try object.refuseUnknownKeys(allowed: rootKeys)

        let tableValue = object["table"]
        // `schema.name` or a quoted name as SQL writes it (the hand-written SQL and its
        // legacy-activity key spell it so); a name alone is found on the runner's search_path.
        let tableText = try tableValue.string()
        let table = try tableText.contains(".") || tableText.hasPrefix("\"")
            ? try DeclarativePlanDecoder.qualifiedName(tableValue).description
            : try tableValue.text(length: PlanLimits.tableNameByteCount, unit: .bytes)
        return MigrationPlan(
            name: try object["name"].text(length: PlanLimits.nameLength),
            table: table,
            legacyApplicationPattern: try object.optional("legacyApplicationPattern")?
                .text(length: PlanLimits.legacyApplicationPatternLength),
            modernWriterWindow: try duration(object["modernWriterWindow"]),
            steps: try steps(object["steps"]),
            statements: try object.optional("statements").map(statements) ?? []
        )
    }

    /// The applications' statements a rehearsal replays: 1 to 64 objects with `name` (1 to 128
    /// characters, unique), `application` (`legacy` or `modern`) and `sql` (one statement, 1 to
    /// 8,192 characters; tab and line breaks allowed).
    static func statements(_ value: ManifestValue) throws(ManifestFault) -> [ApplicationStatement] {
        var statements: [ApplicationStatement] = []
        for entry in try value.array(count: listCount) {
            let object = try entry.object()
            try object.refuseUnknownKeys(allowed: statementKeys)
            let name = try object["name"].text(length: PlanLimits.nameLength)
            if statements.contains(where: { $0.name == name }) { throw object["name"].fault(.repeatedStatementName(name)) }
            let applicationValue = object["application"]
            let text = try applicationValue.string()
            guard let application = ApplicationStatement.Application(rawValue: text) else {
                throw applicationValue.fault(.notOneOf(text, allowed: ApplicationStatement.Application.allCases.map(\.rawValue)))
            }
            let sqlValue = object["sql"]
            let sql = try sqlValue.text(length: PlanLimits.inlineSQLLength, allowingLineBreaks: true)
            let count = SQLStatements.split(sql).count
            guard count == 1 else { throw sqlValue.fault(.statementCount(found: count)) }
            statements.append(ApplicationStatement(name: name, application: application, sql: sql))
        }
        return statements
    }

    private static func steps(_ value: ManifestValue) throws(ManifestFault) -> [PlanStep] {
        var steps: [PlanStep] = []
        for entry in try value.array(count: listCount) {
            let object = try entry.object()
            let kindValue = object["kind"]
            let name = try kindValue.string()
            guard let kind = PlanStep.Kind(rawValue: name) else { throw kindValue.fault(.unknownStepKind(name)) }
            let previous = steps.last?.kind
            guard isAllowed(kind, after: previous) else {
                throw kindValue.fault(.stepOutOfOrder(kind, previous: previous))
            }
            try object.refuseUnknownKeys(allowed: kind.allowedKeys)
            steps.append(try step(kind, object))
        }
        guard steps.last?.kind == .contract else { throw value.fault(.missingStep(.contract)) }
        // Contract removes v1, so the runner must be able to count the rows that still have only
        // v1: that count is the backfill step's `remaining` query.
        guard steps.contains(where: { $0.kind == .backfill }) else { throw value.fault(.missingStep(.backfill)) }
        return steps
    }

    /// Expand first; then each kind only after every kind before it in ``PlanStep/Kind/allCases``.
    private static func isAllowed(_ kind: PlanStep.Kind, after previous: PlanStep.Kind?) -> Bool {
        guard let previous else { return kind == .expand }
        let order = PlanStep.Kind.allCases
        return order.firstIndex(of: kind) ?? 0 > order.firstIndex(of: previous) ?? 0
    }

    private static func step(_ kind: PlanStep.Kind, _ object: ManifestObject) throws(ManifestFault) -> PlanStep {
        let hasApply = kind == .expand || kind == .contract
        var backfill: PlanBackfill?
        if kind == .backfill {
            backfill = PlanBackfill(
                batch: try sqlFile(object["batch"], allowsObject: false),
                remaining: try sqlFile(object["remaining"], allowsObject: false),
                batchSize: try object.optional("batchSize")?.integer(in: PlanLimits.batchSize)
                    ?? PlanLimits.defaultBatchSize,
                niceRatio: try object.optional("niceRatio")?.number(in: PlanLimits.niceRatio)
                    ?? PlanLimits.defaultNiceRatio,
                maximumReplicaLag: try object.optional("maxReplicaLag").map(duration) ?? PlanLimits.defaultMaximumReplicaLag,
                throttle: try PlanBackfillThrottle.decode(from: object)
            )
        }
        return PlanStep(
            kind: kind,
            apply: hasApply ? try sqlFiles(object["apply"]) : [],
            revert: try revertFiles(kind, object),
            backfill: backfill,
            checks: try object.optional("checks").map(checks) ?? []
        )
    }

    /// Expand's `revert` is required; contract's is optional (without it, a contract that stopped
    /// half way can only be finished); other kinds have none.
    private static func revertFiles(_ kind: PlanStep.Kind, _ object: ManifestObject) throws(ManifestFault) -> [PlanSQLFile] {
        switch kind {
        case .expand: try sqlFiles(object["revert"])
        case .contract: try object.optional("revert").map(sqlFiles) ?? []
        case .switch, .backfill: []
        }
    }

    static func sqlFiles(_ value: ManifestValue) throws(ManifestFault) -> [PlanSQLFile] {
        var files: [PlanSQLFile] = []
        for entry in try value.array(count: listCount) {
            let file = try sqlFile(entry, allowsObject: true)
            guard !files.contains(where: { $0.path == file.path }) else { throw entry.fault(.repeatedFile(file.path)) }
            files.append(file)
        }
        return files
    }

    /// A path string, or where `allowsObject`, `{"file": path, "transaction": bool, "serverVersion": ">= 18"}`.
    private static func sqlFile(_ value: ManifestValue, allowsObject: Bool) throws(ManifestFault) -> PlanSQLFile {
        guard allowsObject else { return PlanSQLFile(path: try path(value)) }
        let entry = try value.require([.string, .object]) { value -> JSONValue? in
            switch value {
            case .string, .object: value
            default: nil
            }
        }
        guard case .object = entry else { return PlanSQLFile(path: try path(value)) }
        let object = try value.object()
        try object.refuseUnknownKeys(allowed: fileKeys)
        return PlanSQLFile(
            path: try path(object["file"]),
            runsInTransaction: try object.optional("transaction")?.boolean() ?? true,
            serverVersion: try object.optional("serverVersion").map(serverVersion)
        )
    }

    private static func serverVersion(_ value: ManifestValue) throws(ManifestFault) -> ServerVersionRange {
        let text = try value.text(length: PlanLimits.serverVersionLength)
        guard let range = ServerVersionRange(text) else { throw value.fault(.invalidServerVersion(text)) }
        return range
    }

    static func path(_ value: ManifestValue) throws(ManifestFault) -> String {
        let path = try value.string()
        if let problem = PlanSQLFile.problem(with: path) { throw value.fault(problem) }
        return path
    }

    /// A step's list of checks, each with a name no other check of the list has.
    static func checks(_ value: ManifestValue) throws(ManifestFault) -> [PlanCheck] {
        var checks: [PlanCheck] = []
        for entry in try value.array(count: 0...PlanLimits.maximumListCount) {
            let object = try entry.object()
            try object.refuseUnknownKeys(allowed: checkKeys)
            let name = try object["name"].text(length: PlanLimits.nameLength)
            guard !checks.contains(where: { $0.name == name }) else {
                throw object["name"].fault(.repeatedCheckName(name))
            }
            checks.append(PlanCheck(
                name: name,
                query: try query(object),
                expectation: try expectation(object["expect"]),
                message: try object["message"].text(length: PlanLimits.checkMessageLength)
            ))
        }
        return checks
    }

    private static func query(_ check: ManifestObject) throws(ManifestFault) -> PlanCheck.Query {
        switch (check.optional("sql"), check.optional("sqlFile")) {
        case (let sql?, nil):
            return .inline(try sql.text(length: PlanLimits.inlineSQLLength, allowingLineBreaks: true))
        case (nil, let file?):
            return .file(path: try path(file))
        case (nil, nil):
            throw ManifestFault(field: check.path, problem: .checkQueryCount(found: 0))
        case (_?, _?):
            throw ManifestFault(field: check.path, problem: .checkQueryCount(found: 2))
        }
    }

    private static func expectation(_ value: ManifestValue) throws(ManifestFault) -> CheckExpectation {
        let text = try value.text(length: PlanLimits.expectationLength)
        guard let expectation = CheckExpectation(text) else { throw value.fault(.invalidExpectation(text)) }
        return expectation
    }

    /// A duration in ``DurationText``'s grammar (`500ms`, `30s`, `1h30m`), `0s` to `366d`.
    static func duration(_ value: ManifestValue) throws(ManifestFault) -> Duration {
        let text = try value.string()
        guard let duration = try? DurationText.parse(text), duration <= PlanLimits.maximumModernWriterWindow else {
            throw value.fault(.invalidDuration(text))
        }
        return duration
    }

    /// The JSON parser's problem, with byte offsets turned into lines and columns an editor shows.
    private static func syntaxProblem(_ problem: MalformedDraftProblem, in bytes: [UInt8]) -> PlanManifestProblem {
        switch problem {
        case .invalidUTF8(let offset):
            let (line, column) = position(of: offset, in: bytes)
            return .invalidUTF8(line: line, column: column)
        case .truncated:
            return .truncated
        case .invalidSyntax(let offset), .duplicateField(let offset):
            let (line, column) = position(of: offset, in: bytes)
            return .invalidSyntax(line: line, column: column)
        case .trailingData(let offset):
            let (line, column) = position(of: offset, in: bytes)
            return .trailingData(line: line, column: column)
        case .nestingTooDeep(let maximum):
            return .nestingTooDeep(maximum: maximum)
        case .missingField, .wrongType, .unexpectedVersion:
            // The parser reports syntax only; these come from codecs reading a parsed document.
            return .invalidSyntax(line: 1, column: 1)
        }
    }

    /// The 1-based line and column (in characters) of the byte at `offset`.
    private static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
