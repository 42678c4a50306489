import Foundation
internal import CLibPQ

extension PostgresConnection {
    /// The most parameters one statement can bind (the protocol counts them in 16 bits).
    static let parameterLimit = 65_535

    /// The statement of a query, after refusing NULs and more parameters than the protocol
    /// can carry, so that what libpq would refuse is refused before anything is queued.
    func prepareText(of query: PostgresQuery) throws -> StatementKey {
        let sql = try query.render(quotingIdentifiersWith: quoteIdentifier)
        guard query.binds.count <= Self.parameterLimit else {
            throw PostgresError(code: .invalidArgument,
                                message: "the statement binds \(query.binds.count) parameters, more than the \(Self.parameterLimit) PostgreSQL accepts; nothing was sent")
        }
        try Self.refuseNUL(sql: sql, binds: query.binds)
        return StatementKey(sql: sql, types: query.binds.map { Oid($0.type.rawValue) })
    }

    static func refuseNUL(sql: String, binds: [PostgresBind]) throws {
        var sql = sql
        if sql.withUTF8({ containsNUL(UnsafeRawBufferPointer($0)) }) {
            throw PostgresError(code: .invalidArgument,
                                message: "the SQL text contains a NUL character; nothing was sent")
        }
        // Binary values may hold any byte; text is sent NUL-terminated.
        if let position = binds.firstIndex(where: { !$0.isBinary && $0.withSentBytes(containsNUL) == true }) {
            throw PostgresError(
                code: .invalidArgument,
                message: "parameter $\(position + 1) contains a NUL character, which PostgreSQL text cannot hold; nothing was sent")
        }
    }

    private static func containsNUL(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count > 0 && memchr(bytes.baseAddress!, 0, bytes.count) != nil
    }

    /// The parameters as libpq takes them: values, their lengths and formats (nil when every
    /// value is text, which libpq reads up to its NUL terminator).
    struct ParameterArrays {
        let count: Int32
        let values: UnsafePointer<UnsafePointer<CChar>?>?
        let lengths: UnsafePointer<Int32>?
        let formats: UnsafePointer<Int32>?
    }

    /// Calls `body` with the parameters as libpq takes them, valid during the call.
    ///
    /// Every value is copied once, into one buffer (on the stack when it is small), text
    /// followed by its NUL terminator, binary values as they are.
    func withParameterArrays<R>(_ binds: [PostgresBind], _ body: (ParameterArrays) -> R) -> R {
        // Each value's bytes, and a terminator for text (and, harmlessly, for NULL).
        let size = binds.reduce(0) { $0 + ($1.withSentBytes { $0.count } ?? 0) + ($1.isBinary ? 0 : 1) }
        let hasBinary = binds.contains { $0.isBinary }
        let count = binds.count
        return withUnsafeTemporaryAllocation(byteCount: max(size, 1), alignment: 1) { buffer in
            withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: max(count, 1)) { values in
                // Lengths first, then formats, in one allocation.
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: max(2 * count, 1)) { lengthsAndFormats in
                    var next = buffer.baseAddress!
                    for (index, bind) in binds.enumerated() {
                        let length = bind.withSentBytes { Self.copy($0, to: next) }
                        lengthsAndFormats[index] = Int32(length ?? 0)
                        lengthsAndFormats[count + index] = bind.isBinary ? 1 : 0
                        guard let length else {
                            values[index] = nil
                            continue
                        }
                        values[index] = UnsafePointer(next.assumingMemoryBound(to: CChar.self))
                        next += length
                        if !bind.isBinary {
                            next.storeBytes(of: 0, as: UInt8.self)
                            next += 1
                        }
                    }
                    let lengths = UnsafePointer(lengthsAndFormats.baseAddress!)
                    return body(ParameterArrays(count: Int32(count), values: UnsafePointer(values.baseAddress!),
                                                lengths: hasBinary ? lengths : nil,
                                                formats: hasBinary ? lengths + count : nil))
                }
            }
        }
    }

    /// Copies `bytes` to `destination`; returns how many.
    private static func copy(_ bytes: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) -> Int {
        if let source = bytes.baseAddress { destination.copyMemory(from: source, byteCount: bytes.count) }
        return bytes.count
    }
}

extension PostgresBind {
    /// Calls `body` with the bytes sent for the value, without a terminator; nil for NULL.
    func withSentBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        switch value {
        case .null: nil
        case .text(var text): text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        case .utf8(let bytes), .bytea(let bytes): bytes.withUnsafeBytes(body)
        }
    }
}
