// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ProofAnchor} from "./ProofAnchor.sol";

/// @title AbstractAccount: the keyless on-chain account of one ledger identity (ADI).
/// @notice Deployed by AccountFactory with CREATE2 (salt keccak256(adiUrl)), so it has the same address on
/// every chain. It has no owner key: the only way to make it act is executeGovernanceProofDirect with an
/// anchor proven by the validator quorum. All checks run before the call, and a failing call reverts the
/// whole transaction, so nothing is consumed and no event is left.
contract AbstractAccount {
    ProofAnchor public immutable anchor;
    bytes32 public immutable adiHash;
    /// block of the deployment (AccountFactory's AccountCreated log is in it)
    uint256 public immutable deployedBlock;

    event Executed(bytes32 indexed anchorId, uint256 leafIndex, bytes32 executionCommitment);

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
        (ok, result) = target.call{value: value}(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(result, 0x20), mload(result))
            }
        }
        emit Executed(anchorId, proof.leafIndex, commitment);
    }
}
