// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title BLS12-381 over the EIP-2537 precompiles (Prague).
/// @notice Hash-to-curve per RFC 9380 (expand_message_xmd with SHA-256, SSWU via the MAP precompiles)
///         for G1 (suite BLS12381G1_XMD:SHA-256_SSWU_RO_) and G2 (BLS12381G2_XMD:SHA-256_SSWU_RO_),
///         and the two-pair pairing checks for the min-sig (keys in G2, signatures in G1) and min-pk
///         (keys in G1, signatures in G2) variants.
/// Encodings are EIP-2537's: an Fp element is 64 bytes big-endian (16 zero bytes + 48 bytes), a G1 point
/// is x || y (128 bytes), a G2 point is x.c0 || x.c1 || y.c0 || y.c1 (256 bytes), infinity is all zeros.
/// Every precompile call checks both success and the exact return length (on a chain without the
/// precompiles a call to an empty account "succeeds" with no data).
library BLS {
    error BLSPrecompileFailed(uint256 precompile);
    error BLSBadInput();

    uint256 internal constant SHA256 = 0x02;
    uint256 internal constant MODEXP = 0x05;
    uint256 internal constant G1ADD = 0x0b;
    uint256 internal constant G2ADD = 0x0d;
    uint256 internal constant PAIRING = 0x0f;
    uint256 internal constant MAP_FP_TO_G1 = 0x10;
    uint256 internal constant MAP_FP2_TO_G2 = 0x11;

    // p as 64 bytes (two words).
    uint256 internal constant P_HI = 0x000000000000000000000000000000001a0111ea397fe69a4b1ba7b6434bacd7;
    uint256 internal constant P_LO = 0x64774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab;

    // -G1 (generator with y negated), EIP-2537 encoding as 4 words.
    uint256 internal constant NG1_X_HI = 0x0000000000000000000000000000000017f1d3a73197d7942695638c4fa9ac0f;
    uint256 internal constant NG1_X_LO = 0xc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb;
    uint256 internal constant NG1_Y_HI = 0x00000000000000000000000000000000114d1d6855d545a8aa7d76c8cf2e21f2;
    uint256 internal constant NG1_Y_LO = 0x67816aef1db507c96655b9d5caac42364e6f38ba0ecb751bad54dcd6b939c2ca;

    // -G2 (generator with y negated), EIP-2537 encoding as 8 words.
    uint256 internal constant NG2_XC0_HI = 0x00000000000000000000000000000000024aa2b2f08f0a91260805272dc51051;
    uint256 internal constant NG2_XC0_LO = 0xc6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8;
    uint256 internal constant NG2_XC1_HI = 0x0000000000000000000000000000000013e02b6052719f607dacd3a088274f65;
    uint256 internal constant NG2_XC1_LO = 0x596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e;
    uint256 internal constant NG2_YC0_HI = 0x000000000000000000000000000000000d1b3cc2c7027888be51d9ef691d77bc;
    uint256 internal constant NG2_YC0_LO = 0xb679afda66c73f17f9ee3837a55024f78c71363275a75d75d86bab79f74782aa;
    uint256 internal constant NG2_YC1_HI = 0x0000000000000000000000000000000013fa4d4a0ad8b1ce186ed5061789213d;
    uint256 internal constant NG2_YC1_LO = 0x993923066dddaf1040bc3ff59f825c78df74f2d75467e25e0f55f8a00fa030ed;

    /// RFC 9380 §5.3.1 expand_message_xmd (SHA-256). lenInBytes must be a multiple of 32, at most 8160.
    function expandMessageXmd(bytes memory message, bytes memory dst, uint256 lenInBytes)
        internal
        view
        returns (bytes memory out)
    {
        uint256 dstLen = dst.length;
        if (dstLen == 0 || dstLen > 255 || lenInBytes == 0 || lenInBytes % 32 != 0 || lenInBytes > 8160) {
            revert BLSBadInput();
        }
        out = new bytes(lenInBytes);
        bool ok;
        assembly ("memory-safe") {
            let msgLen := mload(message)
            let buf := mload(0x40)
            // msg_prime = Z_pad(64) || msg || I2OSP(len, 2) || I2OSP(0, 1) || DST || I2OSP(len(DST), 1)
            mstore(buf, 0)
            mstore(add(buf, 0x20), 0)
            mcopy(add(buf, 0x40), add(message, 0x20), msgLen)
            let p := add(add(buf, 0x40), msgLen)
            mstore8(p, shr(8, lenInBytes))
            mstore8(add(p, 1), and(lenInBytes, 0xff))
            mstore8(add(p, 2), 0)
            mcopy(add(p, 3), add(dst, 0x20), dstLen)
            mstore8(add(add(p, 3), dstLen), dstLen)
            ok := staticcall(gas(), SHA256, buf, add(add(0x44, msgLen), dstLen), 0x00, 0x20)
            let b0 := mload(0x00)
            // b_1 = H(b0 || 0x01 || DST_prime); b_i = H((b0 xor b_{i-1}) || i || DST_prime)
            mstore(buf, b0)
            mstore8(add(buf, 0x20), 1)
            mcopy(add(buf, 0x21), add(dst, 0x20), dstLen)
            mstore8(add(add(buf, 0x21), dstLen), dstLen)
            let biLen := add(0x22, dstLen)
            let o := add(out, 0x20)
            ok := and(ok, staticcall(gas(), SHA256, buf, biLen, o, 0x20))
            let ell := shr(5, lenInBytes)
            for { let i := 2 } iszero(gt(i, ell)) { i := add(i, 1) } {
                mstore(buf, xor(b0, mload(o)))
                mstore8(add(buf, 0x20), i)
                o := add(o, 0x20)
                ok := and(ok, staticcall(gas(), SHA256, buf, biLen, o, 0x20))
            }
        }
        if (!ok) revert BLSPrecompileFailed(SHA256);
    }

    /// Reduce `count` consecutive 64-byte big-endian integers at `src` modulo p, writing 64-byte Fp
    /// elements to `dst` (may equal src). `scratch` needs 0xe1 bytes.
    function _reduce(uint256 src, uint256 dst, uint256 count, uint256 scratch) private view {
        bool ok = true;
        assembly ("memory-safe") {
            mstore(scratch, 64)
            mstore(add(scratch, 0x20), 1)
            mstore(add(scratch, 0x40), 64)
            mstore8(add(scratch, 0xa0), 1)
            mstore(add(scratch, 0xa1), P_HI)
            mstore(add(scratch, 0xc1), P_LO)
            for { let i := 0 } lt(i, count) { i := add(i, 1) } {
                mcopy(add(scratch, 0x60), add(src, mul(i, 64)), 64)
                ok := and(ok, staticcall(gas(), MODEXP, scratch, 0xe1, add(dst, mul(i, 64)), 64))
                ok := and(ok, eq(returndatasize(), 64))
            }
        }
        if (!ok) revert BLSPrecompileFailed(MODEXP);
    }

    /// hash_to_curve to G1 (RFC 9380, BLS12381G1_XMD:SHA-256_SSWU_RO_). Returns the 128-byte point.
    function hashToG1(bytes memory message, bytes memory dst) internal view returns (bytes memory point) {
        bytes memory u = expandMessageXmd(message, dst, 128);
        point = new bytes(128);
        bool ok = true;
        uint256 uPtr;
        uint256 scratch;
        assembly ("memory-safe") {
            uPtr := add(u, 0x20)
            scratch := mload(0x40)
            mstore(0x40, add(scratch, 0x200))
        }
        _reduce(uPtr, uPtr, 2, scratch);
        assembly ("memory-safe") {
            // Q0 -> scratch, Q1 -> scratch + 0x80
            ok := and(ok, staticcall(gas(), MAP_FP_TO_G1, uPtr, 64, scratch, 128))
            ok := and(ok, eq(returndatasize(), 128))
            ok := and(ok, staticcall(gas(), MAP_FP_TO_G1, add(uPtr, 64), 64, add(scratch, 0x80), 128))
            ok := and(ok, eq(returndatasize(), 128))
        }
        if (!ok) revert BLSPrecompileFailed(MAP_FP_TO_G1);
        assembly ("memory-safe") {
            ok := and(ok, staticcall(gas(), G1ADD, scratch, 256, add(point, 0x20), 128))
            ok := and(ok, eq(returndatasize(), 128))
        }
        if (!ok) revert BLSPrecompileFailed(G1ADD);
    }

    /// hash_to_curve to G2 (RFC 9380, BLS12381G2_XMD:SHA-256_SSWU_RO_). Returns the 256-byte point.
    function hashToG2(bytes memory message, bytes memory dst) internal view returns (bytes memory point) {
        bytes memory u = expandMessageXmd(message, dst, 256);
        point = new bytes(256);
        bool ok = true;
        uint256 uPtr;
        uint256 scratch;
        assembly ("memory-safe") {
            uPtr := add(u, 0x20)
            scratch := mload(0x40)
            mstore(0x40, add(scratch, 0x200))
        }
        _reduce(uPtr, uPtr, 4, scratch);
        assembly ("memory-safe") {
            ok := and(ok, staticcall(gas(), MAP_FP2_TO_G2, uPtr, 128, scratch, 256))
            ok := and(ok, eq(returndatasize(), 256))
            ok := and(ok, staticcall(gas(), MAP_FP2_TO_G2, add(uPtr, 128), 128, add(scratch, 0x100), 256))
            ok := and(ok, eq(returndatasize(), 256))
        }
        if (!ok) revert BLSPrecompileFailed(MAP_FP2_TO_G2);
        assembly ("memory-safe") {
            ok := and(ok, staticcall(gas(), G2ADD, scratch, 512, add(point, 0x20), 256))
            ok := and(ok, eq(returndatasize(), 256))
        }
        if (!ok) revert BLSPrecompileFailed(G2ADD);
    }

    /// True iff the `len` bytes at `ptr` are all zero (the EIP-2537 point at infinity).
    function isZero(uint256 ptr, uint256 len) internal pure returns (bool z) {
        assembly ("memory-safe") {
            let acc := 0
            for { let i := 0 } lt(i, len) { i := add(i, 0x20) } { acc := or(acc, mload(add(ptr, i))) }
            z := iszero(acc)
        }
    }

    /// min-sig check e(sig, -G2) * e(H, pk) == 1 with sig, H in G1 (128 B at sigPtr, hPtr) and pk in G2
    /// (256 B at pkPtr). Rejects an infinity signature or key. Reverts if the precompile fails (which it
    /// does for a point not on the curve or not in the subgroup); returns false if the check is false.
    function pairingMinSig(uint256 sigPtr, uint256 hPtr, uint256 pkPtr) internal view returns (bool valid) {
        if (isZero(sigPtr, 128) || isZero(pkPtr, 256)) return false;
        bool ok;
        assembly ("memory-safe") {
            let buf := mload(0x40)
            mcopy(buf, sigPtr, 128)
            mstore(add(buf, 0x80), NG2_XC0_HI)
            mstore(add(buf, 0xa0), NG2_XC0_LO)
            mstore(add(buf, 0xc0), NG2_XC1_HI)
            mstore(add(buf, 0xe0), NG2_XC1_LO)
            mstore(add(buf, 0x100), NG2_YC0_HI)
            mstore(add(buf, 0x120), NG2_YC0_LO)
            mstore(add(buf, 0x140), NG2_YC1_HI)
            mstore(add(buf, 0x160), NG2_YC1_LO)
            mcopy(add(buf, 0x180), hPtr, 128)
            mcopy(add(buf, 0x200), pkPtr, 256)
            ok := staticcall(gas(), PAIRING, buf, 768, 0x00, 0x20)
            ok := and(ok, eq(returndatasize(), 32))
            valid := eq(mload(0x00), 1)
        }
        if (!ok) revert BLSPrecompileFailed(PAIRING);
    }

    /// min-pk check e(pk, H) * e(-G1, sig) == 1 with pk in G1 (128 B) and H, sig in G2 (256 B).
    function pairingMinPk(uint256 pkPtr, uint256 hPtr, uint256 sigPtr) internal view returns (bool valid) {
        if (isZero(sigPtr, 256) || isZero(pkPtr, 128)) return false;
        bool ok;
        assembly ("memory-safe") {
            let buf := mload(0x40)
            mcopy(buf, pkPtr, 128)
            mcopy(add(buf, 0x80), hPtr, 256)
            mstore(add(buf, 0x180), NG1_X_HI)
            mstore(add(buf, 0x1a0), NG1_X_LO)
            mstore(add(buf, 0x1c0), NG1_Y_HI)
            mstore(add(buf, 0x1e0), NG1_Y_LO)
            mcopy(add(buf, 0x200), sigPtr, 256)
            ok := staticcall(gas(), PAIRING, buf, 768, 0x00, 0x20)
            ok := and(ok, eq(returndatasize(), 32))
            valid := eq(mload(0x00), 1)
        }
        if (!ok) revert BLSPrecompileFailed(PAIRING);
    }

    /// In place: acc (at accPtr, 256 B) += q (at qPtr, 256 B), G2.
    function g2AddInPlace(uint256 accPtr, uint256 qPtr) internal view {
        bool ok;
        assembly ("memory-safe") {
            let buf := mload(0x40)
            mcopy(buf, accPtr, 256)
            mcopy(add(buf, 0x100), qPtr, 256)
            ok := staticcall(gas(), G2ADD, buf, 512, accPtr, 256)
            ok := and(ok, eq(returndatasize(), 256))
        }
        if (!ok) revert BLSPrecompileFailed(G2ADD);
    }

    /// In place: acc (at accPtr, 128 B) += q (at qPtr, 128 B), G1.
    function g1AddInPlace(uint256 accPtr, uint256 qPtr) internal view {
        bool ok;
        assembly ("memory-safe") {
            let buf := mload(0x40)
            mcopy(buf, accPtr, 128)
            mcopy(add(buf, 0x80), qPtr, 128)
            ok := staticcall(gas(), G1ADD, buf, 256, accPtr, 128)
            ok := and(ok, eq(returndatasize(), 128))
        }
        if (!ok) revert BLSPrecompileFailed(G1ADD);
    }

    /// The hot path of the anchor: min-sig verification of a calldata signature (128 B at sigOffset) over a
    /// 32-byte message hashed to G1 under a DST of at most 63 bytes (given as two left-aligned words), against
    /// the G2 key at apkPtr (256 B in memory). One assembly block, no allocations. Rejects infinity for the
    /// signature and the key; reverts if a precompile fails (e.g. a point not on the curve or subgroup).
    function verifyMinSigMsg32(
        bytes32 message,
        bytes32 dstHi,
        bytes32 dstLo,
        uint256 dstLen,
        uint256 sigOffset,
        uint256 apkPtr
    ) internal view returns (bool valid) {
        if (dstLen == 0 || dstLen > 63) revert BLSBadInput();
        bool ok;
        assembly ("memory-safe") {
            let zs := or(or(calldataload(sigOffset), calldataload(add(sigOffset, 0x20))), or(calldataload(add(sigOffset, 0x40)), calldataload(add(sigOffset, 0x60))))
            let zk := 0
            for { let i := 0 } lt(i, 0x100) { i := add(i, 0x20) } { zk := or(zk, mload(add(apkPtr, i))) }
            ok := 1
            if and(iszero(iszero(zs)), iszero(iszero(zk))) {
                let m := mload(0x40)
                // msg_prime = Z_pad(64) || msg || 0x0080 || 0x00 || DST || len(DST)
                mstore(m, 0)
                mstore(add(m, 0x20), 0)
                mstore(add(m, 0x40), message)
                mstore(add(m, 0x60), shl(232, 0x008000))
                mstore(add(m, 0x63), dstHi)
                mstore(add(m, 0x83), dstLo)
                mstore8(add(add(m, 0x63), dstLen), dstLen)
                ok := staticcall(gas(), SHA256, m, add(0x64, dstLen), 0x00, 0x20)
                let b0 := mload(0x00)
                // b_i = H((b0 xor b_{i-1}) || i || DST || len(DST)), b_1 = H(b0 || 1 || ...); into m+0x200..0x27f
                let bi := add(m, 0x100)
                mstore(add(bi, 0x21), dstHi)
                mstore(add(bi, 0x41), dstLo)
                mstore8(add(add(bi, 0x21), dstLen), dstLen)
                let biLen := add(0x22, dstLen)
                mstore(bi, b0)
                mstore8(add(bi, 0x20), 1)
                let u := add(m, 0x200)
                ok := and(ok, staticcall(gas(), SHA256, bi, biLen, u, 0x20))
                for { let i := 2 } lt(i, 5) { i := add(i, 1) } {
                    mstore(bi, xor(b0, mload(add(u, mul(sub(i, 2), 0x20)))))
                    mstore8(add(bi, 0x20), i)
                    ok := and(ok, staticcall(gas(), SHA256, bi, biLen, add(u, mul(sub(i, 1), 0x20)), 0x20))
                }
                // reduce u[0..64), u[64..128) mod p with MODEXP (base^1 mod p) into m+0x400, m+0x440
                let x := add(m, 0x300)
                mstore(x, 64)
                mstore(add(x, 0x20), 1)
                mstore(add(x, 0x40), 64)
                mstore8(add(x, 0xa0), 1)
                mstore(add(x, 0xa1), P_HI)
                mstore(add(x, 0xc1), P_LO)
                let e := add(m, 0x400)
                for { let i := 0 } lt(i, 2) { i := add(i, 1) } {
                    mcopy(add(x, 0x60), add(u, mul(i, 64)), 64)
                    ok := and(ok, staticcall(gas(), MODEXP, x, 0xe1, add(e, mul(i, 64)), 64))
                    ok := and(ok, eq(returndatasize(), 64))
                }
                // Q0, Q1 = MAP_FP_TO_G1(e0), MAP_FP_TO_G1(e1) at m+0x480, m+0x500
                ok := and(ok, staticcall(gas(), MAP_FP_TO_G1, e, 64, add(m, 0x480), 128))
                ok := and(ok, eq(returndatasize(), 128))
                ok := and(ok, staticcall(gas(), MAP_FP_TO_G1, add(e, 64), 64, add(m, 0x500), 128))
                ok := and(ok, eq(returndatasize(), 128))
                // pairing input at m+0x600: sig || -G2 || H || apk
                let pi := add(m, 0x600)
                calldatacopy(pi, sigOffset, 128)
                mstore(add(pi, 0x80), NG2_XC0_HI)
                mstore(add(pi, 0xa0), NG2_XC0_LO)
                mstore(add(pi, 0xc0), NG2_XC1_HI)
                mstore(add(pi, 0xe0), NG2_XC1_LO)
                mstore(add(pi, 0x100), NG2_YC0_HI)
                mstore(add(pi, 0x120), NG2_YC0_LO)
                mstore(add(pi, 0x140), NG2_YC1_HI)
                mstore(add(pi, 0x160), NG2_YC1_LO)
                // H = Q0 + Q1, written straight into the pairing input
                ok := and(ok, staticcall(gas(), G1ADD, add(m, 0x480), 256, add(pi, 0x180), 128))
                ok := and(ok, eq(returndatasize(), 128))
                mcopy(add(pi, 0x200), apkPtr, 256)
                ok := and(ok, staticcall(gas(), PAIRING, pi, 768, 0x00, 0x20))
                ok := and(ok, eq(returndatasize(), 32))
                valid := and(ok, eq(mload(0x00), 1))
            }
        }
        if (!ok) revert BLSPrecompileFailed(PAIRING);
    }
}
