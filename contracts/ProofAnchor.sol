// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {BLS} from "./BLS.sol";

uint256 constant P_HI = 0x000000000000000000000000000000001a0111ea397fe69a4b1ba7b6434bacd7;
uint256 constant P_LO = 0x64774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab;

/// @title ProofAnchor: content-addressed anchors proven by a BLS12-381 validator quorum.
/// @notice One instance per chain, deployed through the deterministic CREATE2 deployer at the same address
/// everywhere. Three steps per operation and chain:
///  1. createAnchor(commitmentRoot, operationId, ledgerTxHash, leafCount) stores a one-slot record under
///     anchorId = keccak256(abi.encode(ANCHOR_ID_DOMAIN, chainid, this, commitmentRoot, operationId,
///     ledgerTxHash, leafCount)). Permissionless: the id commits to the content, and only a quorum proves it.
///  2. executeComprehensiveProof(anchorId, signerBitmap, aggregateSignature) verifies, with the EIP-2537
///     precompiles, the aggregate (min-sig: signatures in G1, keys in G2) of the set bits' validators over
///     m = keccak256(abi.encode(ANCHOR_MSG_DOMAIN, chainid, this, anchorId, validatorSetRoot)), hashed to G1
///     per RFC 9380 under SIG_DST, requires signed power * den >= total power * num, and marks it proven.
///  3. consume(...) is called by an AbstractAccount (msg.sender) before it performs the call: the anchor is
///     proven, the leaf keccak256(abi.encode(LEAF_DOMAIN, msg.sender, adiHash, executionCommitment, deadline,
///     gasLimit)) is at leafIndex of the commitment root (positional binary Merkle tree, zero-padded to a power
///     of two), the block is not later than the leaf's deadline (unix seconds: the intent's expires_at), and the
///     leaf is unused; then it is marked used. A leg that failed after its anchor was proven cannot run after
///     that. gasLimit (0: none) is the gas the account must give the call (AbstractAccount enforces it).
/// The validator set (keys with proof of possession, powers, threshold) lives in an immutable data contract
/// (code read with EXTCODECOPY). There is no owner: the set is replaced only with the signatures of a quorum of
/// the current set over rotationMessage(new set root), which names the current root and the set's epoch, so a
/// rotation cannot be replayed.
contract ProofAnchor {
    bytes32 public constant ANCHOR_ID_DOMAIN = "pgw:anchor-id:v1";
    bytes32 public constant ANCHOR_MSG_DOMAIN = "pgw:bls:anchor:v1";
    bytes32 public constant LEAF_DOMAIN = "pgw:leaf:v3";
    bytes32 public constant VALSET_DOMAIN = "pgw:valset:v1";
    bytes32 public constant ROTATION_MSG_DOMAIN = "pgw:bls:rotate:v1";
    bytes public constant SIG_DST = "PGW-V1-BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_";
    bytes public constant POP_DST = "PGW-V1-BLS_POP_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_";
    // SIG_DST as two left-aligned words for the assembly hot path (pinned to SIG_DST by a test).
    bytes32 internal constant SIG_DST_HI = "PGW-V1-BLS_SIG_BLS12381G1_XMD:SH";
    bytes32 internal constant SIG_DST_LO = "A-256_SSWU_RO_POP_";
    uint256 internal constant SIG_DST_LEN = 50;

    /// The set data contract holds 544 bytes per validator plus 417; EIP-170 caps code at 24,576 bytes (44).
    uint256 public constant MAX_VALIDATORS = 40;
    uint256 public constant MAX_LEAVES = 128;

    uint8 internal constant STATUS_CREATED = 1;
    uint8 internal constant STATUS_PROVEN = 2;
    uint256 internal constant BLOCK_MASK = (1 << 48) - 1;

    /// Inclusion proof of one leg in an anchor, passed by the account.
    struct AnchorProof {
        bytes32 commitmentRoot;
        bytes32 operationId;
        bytes32 ledgerTxHash;
        uint256 leafCount;
        uint256 leafIndex;
        /// unix seconds; bound by the leaf
        uint256 deadline;
        /// gas the call must be given (0: whatever the sender gives); bound by the leaf
        uint256 gasLimit;
        bytes32[] merkleProof;
    }

    event AnchorCreated(
        bytes32 indexed anchorId,
        bytes32 indexed operationId,
        bytes32 commitmentRoot,
        bytes32 ledgerTxHash,
        uint256 leafCount
    );
    event AnchorProven(bytes32 indexed anchorId, uint256 signerBitmap);
    event ValidatorSetRotated(
        bytes32 indexed validatorSetRoot, address data, uint256 count, uint256 totalPower, uint256 thresholdNum, uint256 thresholdDen
    );
    error InvalidAnchor();
    error AnchorAlreadyExists(bytes32 anchorId);
    error AnchorNotFound(bytes32 anchorId);
    error AnchorAlreadyProven(bytes32 anchorId);
    error AnchorNotProven(bytes32 anchorId);
    error InvalidSignerBitmap();
    error ThresholdNotMet(uint256 signedPower, uint256 totalPower);
    error InvalidSignature();
    error InvalidValidatorSet();
    error InvalidProofOfPossession(uint256 index);
    error DuplicateValidator(uint256 index);
    error InvalidMerkleProof();
    error LeafAlreadyUsed(bytes32 anchorId, uint256 leafIndex);
    error AnchorExpired(bytes32 anchorId, uint256 deadline);

    /// rotations so far (0: the genesis set); part of the rotation message
    uint256 public setEpoch;
    /// packed: data contract address (low 160 bits) | blob length << 160
    uint256 internal _set;
    /// packed per anchor: status (bits 0..7) | leafCount (bits 8..23) | block of createAnchor (bits 32..79) |
    /// block of executeComprehensiveProof (bits 80..127) | used-leaf bitmap (bits 128..255). The two block
    /// numbers take no extra storage (same slot, same writes; +11 and +15 gas of arithmetic) and let a reader
    /// fetch the anchor's logs from one block instead of scanning the chain's history.
    mapping(bytes32 => uint256) internal _anchors;

    constructor(
        bytes[] memory publicKeys,
        bytes[] memory proofsOfPossession,
        uint256[] memory powers,
        uint256 thresholdNum,
        uint256 thresholdDen
    ) {
        (bytes memory blob, bytes32 root) = _buildSet(publicKeys, proofsOfPossession, powers, thresholdNum, thresholdDen);
        _installSet(blob, root);
    }

    // ------------------------------------------------------------------ anchors

    function createAnchor(bytes32 commitmentRoot, bytes32 operationId, bytes32 ledgerTxHash, uint256 leafCount)
        external
        returns (bytes32 anchorId)
    {
        if (commitmentRoot == 0 || operationId == 0 || leafCount == 0 || leafCount > MAX_LEAVES) revert InvalidAnchor();
        anchorId = computeAnchorId(commitmentRoot, operationId, ledgerTxHash, leafCount);
        if (_anchors[anchorId] != 0) revert AnchorAlreadyExists(anchorId);
        _anchors[anchorId] = STATUS_CREATED | (leafCount << 8) | (block.number << 32);
        emit AnchorCreated(anchorId, operationId, commitmentRoot, ledgerTxHash, leafCount);
    }

    function executeComprehensiveProof(bytes32 anchorId, uint256 signerBitmap, bytes calldata aggregateSignature)
        external
        returns (bool)
    {
        uint256 meta = _anchors[anchorId];
        if (meta == 0) revert AnchorNotFound(anchorId);
        if (uint8(meta) != STATUS_CREATED) revert AnchorAlreadyProven(anchorId);
        if (aggregateSignature.length != 128) revert InvalidSignature();

        (uint256 apk, bytes32 setRoot) = _aggregate(signerBitmap);
        if (
            !BLS.verifyMinSigMsg32(
                anchorMessage(anchorId, setRoot), SIG_DST_HI, SIG_DST_LO, SIG_DST_LEN, _offset(aggregateSignature), apk
            )
        ) revert InvalidSignature();

        _anchors[anchorId] = (meta + 1) | (block.number << 80); // STATUS_CREATED -> STATUS_PROVEN
        emit AnchorProven(anchorId, signerBitmap);
        return true;
    }

    /// Called by an account: checks the anchor is proven, the leaf (bound to msg.sender, its ADI, the execution
    /// commitment it recomputed, the deadline and the gas limit) is included, the deadline has not passed and the leaf is unused,
    /// then marks it used.
    function consume(AnchorProof calldata proof, bytes32 adiHash, bytes32 executionCommitment)
        external
        returns (bytes32 anchorId)
    {
        anchorId = computeAnchorId(proof.commitmentRoot, proof.operationId, proof.ledgerTxHash, proof.leafCount);
        uint256 meta = _anchors[anchorId];
        if (meta == 0) revert AnchorNotFound(anchorId);
        if (uint8(meta) != STATUS_PROVEN) revert AnchorNotProven(anchorId);
        uint256 leafCount = (meta >> 8) & 0xffff;
        uint256 index = proof.leafIndex;
        if (index >= leafCount || proof.merkleProof.length != _depth(leafCount)) revert InvalidMerkleProof();

        bytes32 node = computeRoot(computeLeaf(msg.sender, adiHash, executionCommitment, proof.deadline, proof.gasLimit), index, proof.merkleProof);
        if (node != proof.commitmentRoot) revert InvalidMerkleProof();
        if (block.timestamp > proof.deadline) revert AnchorExpired(anchorId, proof.deadline);

        uint256 bit = uint256(1) << (128 + index);
        if (meta & bit != 0) revert LeafAlreadyUsed(anchorId, index);
        _anchors[anchorId] = meta | bit;
    }

    // ------------------------------------------------------------------ views (formulas, pinned by tests)

    function computeAnchorId(bytes32 commitmentRoot, bytes32 operationId, bytes32 ledgerTxHash, uint256 leafCount)
        public
        view
        returns (bytes32)
    {
        return keccak256(
            abi.encode(ANCHOR_ID_DOMAIN, block.chainid, address(this), commitmentRoot, operationId, ledgerTxHash, leafCount)
        );
    }

    function anchorMessage(bytes32 anchorId, bytes32 validatorSetRoot_) public view returns (bytes32) {
        return keccak256(abi.encode(ANCHOR_MSG_DOMAIN, block.chainid, address(this), anchorId, validatorSetRoot_));
    }

    function computeLeaf(address account, bytes32 adiHash, bytes32 executionCommitment, uint256 deadline, uint256 gasLimit)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(LEAF_DOMAIN, account, adiHash, executionCommitment, deadline, gasLimit));
    }

    /// Root of a positional binary Merkle tree from a leaf, its index and its sibling path (bottom-up):
    /// at level l the node is keccak256(node || sibling) if bit l of index is 0, else keccak256(sibling || node).
    function computeRoot(bytes32 leaf, uint256 index, bytes32[] calldata path) public pure returns (bytes32 node) {
        node = leaf;
        for (uint256 i; i < path.length; ++i) {
            bytes32 sibling = path[i];
            assembly ("memory-safe") {
                switch and(shr(i, index), 1)
                case 0 {
                    mstore(0x00, node)
                    mstore(0x20, sibling)
                }
                default {
                    mstore(0x00, sibling)
                    mstore(0x20, node)
                }
                node := keccak256(0x00, 0x40)
            }
        }
    }

    /// status: 0 none, 1 created, 2 proven; createdBlock / provenBlock: the blocks of createAnchor and
    /// executeComprehensiveProof (0 until they happen).
    function anchorState(bytes32 anchorId)
        external
        view
        returns (uint8 status, uint256 leafCount, uint256 usedBitmap, uint256 createdBlock, uint256 provenBlock)
    {
        uint256 meta = _anchors[anchorId];
        return (uint8(meta), (meta >> 8) & 0xffff, meta >> 128, (meta >> 32) & BLOCK_MASK, (meta >> 80) & BLOCK_MASK);
    }

    function isLeafUsed(bytes32 anchorId, uint256 leafIndex) external view returns (bool) {
        if (leafIndex >= MAX_LEAVES) return false;
        return (_anchors[anchorId] >> (128 + leafIndex)) & 1 == 1;
    }

    function validatorSet()
        external
        view
        returns (
            bytes32 root,
            uint256 totalPower,
            uint256 thresholdNum,
            uint256 thresholdDen,
            bytes[] memory publicKeys,
            uint256[] memory powers,
            address data
        )
    {
        bytes memory blob = _loadSet();
        uint256 n;
        assembly ("memory-safe") {
            root := mload(add(blob, 0x20))
            totalPower := mload(add(blob, 0x40))
            thresholdNum := mload(add(blob, 0x60))
            thresholdDen := mload(add(blob, 0x80))
            n := mload(add(blob, 0xa0))
        }
        publicKeys = new bytes[](n);
        powers = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            bytes memory pk = new bytes(256);
            uint256 p;
            assembly ("memory-safe") {
                mcopy(add(pk, 0x20), add(blob, add(0xc0, mul(i, 256))), 256)
                p := mload(add(blob, add(add(0xc0, mul(n, 256)), mul(i, 0x20))))
            }
            publicKeys[i] = pk;
            powers[i] = p;
        }
        data = address(uint160(_set));
    }

    function validatorSetRoot() external view returns (bytes32 root) {
        bytes memory blob = _loadSet();
        assembly ("memory-safe") {
            root := mload(add(blob, 0x20))
        }
    }

    // ------------------------------------------------------------------ governance

    /// What a quorum of the current set signs to replace it (hashed to G1 under SIG_DST like anchor messages;
    /// the domain tag keeps the two apart).
    function rotationMessage(bytes32 currentRoot, bytes32 newRoot, uint256 epoch) public view returns (bytes32) {
        return keccak256(abi.encode(ROTATION_MSG_DOMAIN, block.chainid, address(this), currentRoot, newRoot, epoch));
    }

    /// Replaces the validator set. Anyone may send it; it takes effect only with an aggregate signature of a
    /// quorum of the current set (signerBitmap, threshold as for anchors) over rotationMessage(current root,
    /// new root, setEpoch). Anchors already proven stay proven.
    function rotateValidatorSet(
        bytes[] calldata publicKeys,
        bytes[] calldata proofsOfPossession,
        uint256[] calldata powers,
        uint256 thresholdNum,
        uint256 thresholdDen,
        uint256 signerBitmap,
        bytes calldata aggregateSignature
    ) external {
        if (aggregateSignature.length != 128) revert InvalidSignature();
        (bytes memory blob, bytes32 newRoot) = _buildSet(publicKeys, proofsOfPossession, powers, thresholdNum, thresholdDen);
        (uint256 apk, bytes32 currentRoot) = _aggregate(signerBitmap);
        if (
            !BLS.verifyMinSigMsg32(
                rotationMessage(currentRoot, newRoot, setEpoch), SIG_DST_HI, SIG_DST_LO, SIG_DST_LEN, _offset(aggregateSignature), apk
            )
        ) revert InvalidSignature();
        ++setEpoch;
        _installSet(blob, newRoot);
    }

    // ------------------------------------------------------------------ internals

    function _offset(bytes calldata b) internal pure returns (uint256 o) {
        assembly ("memory-safe") {
            o := b.offset
        }
    }

    function _depth(uint256 leafCount) internal pure returns (uint256 d) {
        while ((uint256(1) << d) < leafCount) ++d;
    }

    /// Sums the powers of the bitmap's validators and their G2 keys (apk = memory pointer to 256 bytes),
    /// either directly or, when that takes fewer additions, as the full-set aggregate plus the negated keys
    /// of the non-signers; enforces the threshold signed * den >= total * num. Reads only the parts of
    /// the validator-set data contract it needs (EXTCODECOPY), in one assembly block.
    function _aggregate(uint256 signerBitmap) internal view returns (uint256 apk, bytes32 setRoot) {
        uint256 s = _set;
        bool okAdd;
        uint256 n;
        uint256 signed;
        uint256 totalPower;
        uint256 num;
        uint256 den;
        assembly ("memory-safe") {
            let data := and(s, 0xffffffffffffffffffffffffffffffffffffffff)
            let m := mload(0x40)
            // header: setRoot | totalPower | num | den | n
            extcodecopy(data, m, 1, 0xa0)
            setRoot := mload(m)
            totalPower := mload(add(m, 0x20))
            num := mload(add(m, 0x40))
            den := mload(add(m, 0x60))
            n := mload(add(m, 0x80))
        }
        if (signerBitmap == 0 || (signerBitmap >> n) != 0) revert InvalidSignerBitmap();
        (apk, signed, okAdd) = _sumKeys(address(uint160(s)), n, signerBitmap);
        if (!okAdd) revert BLS.BLSPrecompileFailed(BLS.G2ADD);
        if (signed * den < totalPower * num) revert ThresholdNotMet(signed, totalPower);
    }

    /// See _aggregate. Memory: accumulator at apk (256 B) followed by the addend (256 B).
    function _sumKeys(address data, uint256 n, uint256 signerBitmap)
        internal
        view
        returns (uint256 apk, uint256 signed, bool ok)
    {
        assembly ("memory-safe") {
            apk := mload(0x40)
            mstore(0x40, add(apk, 0x200))
            // code offsets (data starts at code offset 1): keys at 0xa1, then powers, full aggregate, negated keys
            let powersOff := add(0xa1, mul(n, 256))
            let pw := add(apk, 0x200) // powers scratch beyond the allocation
            extcodecopy(data, pw, powersOff, shl(5, n))
            let k := 0
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                if and(shr(i, signerBitmap), 1) {
                    k := add(k, 1)
                    signed := add(signed, mload(add(pw, shl(5, i))))
                }
            }
            ok := 1
            let want := 1
            let srcOff := 0xa1
            let first := 1
            if lt(sub(n, k), sub(k, 1)) {
                extcodecopy(data, apk, add(powersOff, shl(5, n)), 256)
                want := 0
                srcOff := add(add(powersOff, shl(5, n)), 256)
                first := 0
            }
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                if eq(and(shr(i, signerBitmap), 1), want) {
                    switch first
                    case 1 {
                        extcodecopy(data, apk, add(srcOff, mul(i, 256)), 256)
                        first := 0
                    }
                    default {
                        extcodecopy(data, add(apk, 0x100), add(srcOff, mul(i, 256)), 256)
                        ok := and(ok, staticcall(gas(), 0x0d, apk, 512, apk, 256))
                        ok := and(ok, eq(returndatasize(), 256))
                    }
                }
            }
        }
    }

    function _loadSet() internal view returns (bytes memory blob) {
        uint256 s = _set;
        address data = address(uint160(s));
        uint256 len = s >> 160;
        assembly ("memory-safe") {
            blob := mload(0x40)
            mstore(blob, len)
            extcodecopy(data, add(blob, 0x20), 1, len)
            mstore(0x40, add(add(blob, 0x20), len))
        }
    }

    /// Blob: setRoot | totalPower | num | den | n | n x 256-byte G2 keys | n x uint256 powers
    ///       | aggregate of all keys (256) | n x negated keys (256 each).
    /// setRoot = keccak256(VALSET_DOMAIN || num || den || n || keys || powers).
    function _buildSet(
        bytes[] memory publicKeys,
        bytes[] memory pops,
        uint256[] memory powers,
        uint256 num,
        uint256 den
    ) internal view returns (bytes memory blob, bytes32 root) {
        uint256 n = publicKeys.length;
        if (
            n == 0 || n > MAX_VALIDATORS || pops.length != n || powers.length != n || num == 0 || den == 0 || num > den
                || den > type(uint64).max
        ) revert InvalidValidatorSet();
        uint256 rootLen = 0x80 + n * 288; // num, den, n, keys, powers
        uint256 len = 0xa0 + n * 288 + 256 + n * 256;
        blob = new bytes(len);
        uint256 base;
        assembly ("memory-safe") {
            base := add(blob, 0x20)
        }
        uint256 total;
        for (uint256 i; i < n; ++i) {
            uint256 p = powers[i];
            if (p == 0 || p > type(uint64).max) revert InvalidValidatorSet();
            _checkKey(publicKeys, pops[i], i);
            total += p;
            bytes memory pk = publicKeys[i];
            assembly ("memory-safe") {
                mcopy(add(base, add(0xa0, mul(i, 256))), add(pk, 0x20), 256)
                mstore(add(base, add(add(0xa0, mul(n, 256)), mul(i, 0x20))), p)
            }
        }
        assembly ("memory-safe") {
            mstore(add(base, 0x20), total)
            mstore(add(base, 0x40), num)
            mstore(add(base, 0x60), den)
            mstore(add(base, 0x80), n)
            // keccak256(VALSET_DOMAIN || blob[0x40..]) using the totalPower word as scratch for the domain
            mstore(add(base, 0x20), VALSET_DOMAIN)
            root := keccak256(add(base, 0x20), rootLen)
            mstore(add(base, 0x20), total)
            mstore(base, root)
        }
        _writeAggregates(base, n);
    }

    /// Writes a blob made by _buildSet to its data contract and makes it the set.
    function _installSet(bytes memory blob, bytes32 root) internal {
        uint256 total;
        uint256 num;
        uint256 den;
        uint256 n;
        assembly ("memory-safe") {
            total := mload(add(blob, 0x40))
            num := mload(add(blob, 0x60))
            den := mload(add(blob, 0x80))
            n := mload(add(blob, 0xa0))
        }
        address data = _writeData(blob);
        _set = uint256(uint160(data)) | (blob.length << 160);
        emit ValidatorSetRotated(root, data, n, total, num, den);
    }

    /// Key i: 256 bytes, neither an earlier key nor its negation (same x coordinate: whoever holds sk can prove
    /// possession of -pk too, and the two seats would cancel in an aggregate, counting power without signing),
    /// and a valid proof of possession (a min-sig signature over the key's 256-byte encoding under POP_DST; the
    /// pairing precompile also subgroup-checks the key). Infinity keys are rejected by BLS.pairingMinSig.
    function _checkKey(bytes[] memory publicKeys, bytes memory popB, uint256 i) internal view {
        bytes memory pk = publicKeys[i];
        if (pk.length != 256 || popB.length != 128) revert InvalidValidatorSet();
        bytes32 kx = _xHash(pk);
        for (uint256 j; j < i; ++j) {
            if (_xHash(publicKeys[j]) == kx) revert DuplicateValidator(i);
        }
        bytes memory h = BLS.hashToG1(pk, POP_DST);
        uint256 popPtr;
        uint256 hPtr;
        uint256 pkPtr;
        assembly ("memory-safe") {
            popPtr := add(popB, 0x20)
            hPtr := add(h, 0x20)
            pkPtr := add(pk, 0x20)
        }
        if (!BLS.pairingMinSig(popPtr, hPtr, pkPtr)) revert InvalidProofOfPossession(i);
    }

    /// keccak256 of a G2 key's x coordinate (its first 128 bytes), shared by the key and its negation.
    function _xHash(bytes memory pk) internal pure returns (bytes32 h) {
        assembly ("memory-safe") {
            h := keccak256(add(pk, 0x20), 128)
        }
    }

    /// Fills the full-set aggregate key and the negated keys into the blob at `base`.
    function _writeAggregates(uint256 base, uint256 n) internal view {
        uint256 keys = base + 0xa0;
        uint256 all = keys + n * 288;
        uint256 neg = all + 256;
        assembly ("memory-safe") {
            mcopy(all, keys, 256)
        }
        for (uint256 i = 1; i < n; ++i) {
            BLS.g2AddInPlace(all, keys + i * 256);
        }
        for (uint256 i; i < n; ++i) {
            uint256 pk = keys + i * 256;
            uint256 out = neg + i * 256;
            assembly ("memory-safe") {
                mcopy(out, pk, 128) // x unchanged
                // y.c0 at +128, y.c1 at +192, each (hi, lo) words; -y = p - y for y != 0
                for { let off := 128 } lt(off, 256) { off := add(off, 64) } {
                    let hi := mload(add(pk, off))
                    let lo := mload(add(add(pk, off), 0x20))
                    switch or(hi, lo)
                    case 0 {
                        mstore(add(out, off), 0)
                        mstore(add(add(out, off), 0x20), 0)
                    }
                    default {
                        let rlo := sub(P_LO, lo)
                        let borrow := gt(lo, P_LO)
                        mstore(add(out, off), sub(sub(P_HI, hi), borrow))
                        mstore(add(add(out, off), 0x20), rlo)
                    }
                }
            }
        }
    }

    /// Deploys `data` as the code of a new contract, prefixed with STOP (SSTORE2 pattern).
    function _writeData(bytes memory data) internal returns (address pointer) {
        assembly ("memory-safe") {
            let len := mload(data)
            let size := add(len, 1)
            let ptr := mload(0x40)
            // init code: PUSH2 size, DUP1, PUSH1 0x0a, RETURNDATASIZE, CODECOPY, RETURNDATASIZE, RETURN; then 0x00 || data
            mstore(ptr, or(shl(248, 0x61), shl(232, size)))
            mstore8(add(ptr, 3), 0x80)
            mstore8(add(ptr, 4), 0x60)
            mstore8(add(ptr, 5), 0x0a)
            mstore8(add(ptr, 6), 0x3d)
            mstore8(add(ptr, 7), 0x39)
            mstore8(add(ptr, 8), 0x3d)
            mstore8(add(ptr, 9), 0xf3)
            mstore8(add(ptr, 10), 0x00)
            mcopy(add(ptr, 11), add(data, 0x20), len)
            pointer := create(0, ptr, add(11, len))
        }
        if (pointer == address(0)) revert InvalidValidatorSet();
    }
}
