/// Strict UTF-8 checking that says where the bytes go wrong, and tells a cut-short sequence apart.
enum UTF8Validation {
    /// The text `bytes` hold, or the first problem: a sequence cut off by the end
    /// of the data is ``MalformedDraftProblem/truncated``; any other bad sequence
    /// (overlong forms, surrogates, values above U+10FFFF, stray continuation
    /// bytes) is ``MalformedDraftProblem/invalidUTF8(byteOffset:)``.
    static func string(from bytes: [UInt8]) throws(MalformedDraftProblem) -> String {
        try validate(bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Throws the first problem ``string(from:)`` would report; returns when the bytes are UTF-8.
    static func validate(_ bytes: [UInt8]) throws(MalformedDraftProblem) {
        var offset = 0
        while offset < bytes.count {
            let lead = bytes[offset]
            if lead < 0x80 {
                offset += 1
                continue
            }
            guard let (length, secondByte) = shape(ofLead: lead) else {
                throw .invalidUTF8(byteOffset: offset)
            }
            for position in 1..<length {
                guard offset + position < bytes.count else { throw .truncated }
                let byte = bytes[offset + position]
                let allowed = position == 1 ? secondByte : 0x80...0xBF
                guard allowed.contains(byte) else { throw .invalidUTF8(byteOffset: offset) }
            }
            offset += length
        }
    }

    /// The sequence length a lead byte starts and the range its second byte must fall in (RFC 3629).
    private static func shape(ofLead lead: UInt8) -> (Int, ClosedRange<UInt8>)? {
        switch lead {
        case 0xC2...0xDF: (2, 0x80...0xBF)
        case 0xE0: (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80...0xBF)
        case 0xED: (3, 0x80...0x9F)
        case 0xF0: (4, 0x90...0xBF)
        case 0xF1...0xF3: (4, 0x80...0xBF)
        case 0xF4: (4, 0x80...0x8F)
        default: nil
        }
    }
}
