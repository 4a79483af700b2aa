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
        bytes32 commitment = executionCommitment(target, value, data);
        bytes32 anchorId = anchor.consume(proof, adiHash, commitment);
        bool ok;
        uint256 gasLimit = proof.gasLimit;
        if (gasLimit == 0) {
            (ok, result) = target.call{value: value}(data);
        } else {
            // EIP-150 passes on at most 63/64 of the gas left after the CALL's own cost, so the call gets all of
            // gasLimit only when enough is left before it; checked first (a check after the call can be passed by
            // a target that recovers from an inner call that ran out of gas and returns what it did not use)
            bytes memory input = data;
            if (gasleft() < (gasLimit * 64) / 63 + CALL_GAS_OVERHEAD) revert InsufficientGas(gasLimit);
            assembly ("memory-safe") {
                ok := call(gasLimit, target, value, add(input, 0x20), mload(input), 0, 0)
                result := mload(0x40)
                mstore(result, returndatasize())
                returndatacopy(add(result, 0x20), 0, returndatasize())
                mstore(0x40, add(add(result, 0x20), and(add(returndatasize(), 0x1f), not(0x1f))))
            }
        }
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(result, 0x20), mload(result))
            }
        }
        emit Executed(anchorId, proof.leafIndex, commitment);
    }
}
