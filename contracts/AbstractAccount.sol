// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ProofAnchor} from "./ProofAnchor.sol";

/// @title AbstractAccount: the keyless on-chain account of one ledger identity (ADI).
/// @notice Deployed by AccountFactory with CREATE2 (salt keccak256(adiUrl)), so it has the same address on
/// every chain. It has no owner key: the only way to make it act is executeGovernanceProofDirect with an
/// anchor proven by the validator quorum. All checks run before the call, and a failing call reverts the
/// whole transaction, so nothing is consumed and no event is left. A leaf with a gas limit gets exactly that
/// much gas for its call, or the transaction reverts (InsufficientGas): nobody can consume it with too little
/// gas so that the target takes a cheaper branch (a try/catch, a low-level call that may fail).
contract AbstractAccount {
    ProofAnchor public immutable anchor;
    bytes32 public immutable adiHash;
    /// block of the deployment (AccountFactory's AccountCreated log is in it)
    uint256 public immutable deployedBlock;

    event Executed(bytes32 indexed anchorId, uint256 leafIndex, bytes32 executionCommitment);

    error InsufficientGas(uint256 gasLimit);

    /// Upper bound of a CALL's own cost (2,600 cold access + 9,000 value transfer + 25,000 new account) and the
    /// few instructions between the gas check and the call.
    uint256 internal constant CALL_GAS_OVERHEAD = 40_000;

    constructor(ProofAnchor anchor_, bytes32 adiHash_) payable {
        anchor = anchor_;
        adiHash = adiHash_;
        deployedBlock = block.number;
    }

    receive() external payable {}

    /// keccak256(abi.encodePacked(chainId, target, value, keccak256(data))) for this chain.
    function executionCommitment(address target, uint256 value, bytes calldata data) public view returns (bytes32) {
        return keccak256(abi.encodePacked(block.chainid, target, value, keccak256(data)));
    }

    function executeGovernanceProofDirect(
        address target,
        uint256 value,
        bytes calldata data,
        ProofAnchor.AnchorProof calldata proof
    ) external returns (bytes memory result) {
        // data is copied to memory once: hashed for the commitment there, and the call reads it from there
        uint256 input;
        bytes32 commitment;
        assembly ("memory-safe") {
            input := mload(0x40)
            calldatacopy(input, data.offset, data.length)
            let dataHash := keccak256(input, data.length)
            let m := add(input, data.length)
            mstore(m, chainid())
            mstore(add(m, 0x20), shl(96, target))
            mstore(add(m, 0x34), value)
            mstore(add(m, 0x54), dataHash)
            commitment := keccak256(m, 0x74)
            mstore(0x40, and(add(m, 0x9f), not(0x1f))) // past the data and the commitment preimage, word-aligned
        }
        bytes32 anchorId = _consume(proof, commitment);
        uint256 gasLimit = proof.gasLimit;
        // EIP-150 passes on at most 63/64 of the gas left after the CALL's own cost, so the call gets all of
        // gasLimit only when enough is left before it; checked first (a check after the call can be passed by
        // a target that recovers from an inner call that ran out of gas and returns what it did not use)
        if (gasLimit != 0 && gasleft() < (gasLimit * 64) / 63 + CALL_GAS_OVERHEAD) revert InsufficientGas(gasLimit);
        bool ok;
        (ok, result) = _call(target, value, input, data.length, gasLimit);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(result, 0x20), mload(result))
            }
        }
        emit Executed(anchorId, proof.leafIndex, commitment);
    }

    /// target.call{value, gas: gasLimit or all}(the len bytes at input), with its return data.
    function _call(address target, uint256 value, uint256 input, uint256 len, uint256 gasLimit)
        internal
        returns (bool ok, bytes memory result)
    {
        assembly ("memory-safe") {
            let g := gasLimit
            if iszero(g) { g := gas() }
            ok := call(g, target, value, input, len, 0, 0)
            result := mload(0x40)
            mstore(result, returndatasize())
            returndatacopy(add(result, 0x20), 0, returndatasize())
            mstore(0x40, add(add(result, 0x20), and(add(returndatasize(), 0x1f), not(0x1f))))
        }
    }

    /// anchor.consume(proof, adiHash, commitment), with the proof forwarded from calldata as it is encoded there
    /// (its 8 head words, then the Merkle path), without Solidity re-encoding the struct in memory.
    function _consume(ProofAnchor.AnchorProof calldata proof, bytes32 commitment) internal returns (bytes32 anchorId) {
        address a = address(anchor);
        bytes32 adi = adiHash;
        bytes32[] calldata path = proof.merkleProof;
        bytes4 selector = ProofAnchor.consume.selector;
        bool ok;
        assembly ("memory-safe") {
            let m := mload(0x40)
            let n := path.length
            let len := add(0x184, shl(5, n)) // selector + 3 head words + 8 struct words + length + path
            mstore(m, selector)
            mstore(add(m, 0x04), 0x60)
            mstore(add(m, 0x24), adi)
            mstore(add(m, 0x44), commitment)
            calldatacopy(add(m, 0x64), proof, 0xe0)
            mstore(add(m, 0x144), 0x100)
            mstore(add(m, 0x164), n)
            calldatacopy(add(m, 0x184), path.offset, shl(5, n))
            ok := call(gas(), a, 0, m, len, 0x00, 0x20)
            if iszero(ok) {
                returndatacopy(m, 0, returndatasize())
                revert(m, returndatasize())
            }
            if lt(returndatasize(), 0x20) { revert(0, 0) }
            anchorId := mload(0x00)
        }
    }
}
