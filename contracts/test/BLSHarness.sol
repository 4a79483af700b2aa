// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {BLS} from "../BLS.sol";

/// Test and benchmark harness (not deployed by the system): exposes the BLS library so tests can pin
/// hash-to-curve against noble-curves and the gas bench can compare min-sig and min-pk verification.
contract BLSHarness {
    function expandMessageXmd(bytes calldata message, bytes calldata dst, uint256 len) external view returns (bytes memory) {
        return BLS.expandMessageXmd(message, dst, len);
    }

    function hashToG1(bytes calldata message, bytes calldata dst) external view returns (bytes memory) {
        return BLS.hashToG1(message, dst);
    }

    function hashToG2(bytes calldata message, bytes calldata dst) external view returns (bytes memory) {
        return BLS.hashToG2(message, dst);
    }

    /// Keys in G2 (256 B), signature in G1 (128 B): hash to G1 + 2-pair pairing.
    function verifyMinSig(bytes calldata pk, bytes calldata sig, bytes calldata message, bytes calldata dst)
        external
        view
        returns (bool)
    {
        bytes memory h = BLS.hashToG1(message, dst);
        bytes memory pkm = pk;
        bytes memory sigm = sig;
        uint256 a;
        uint256 b;
        uint256 c;
        assembly ("memory-safe") {
            a := add(sigm, 0x20)
            b := add(h, 0x20)
            c := add(pkm, 0x20)
        }
        return BLS.pairingMinSig(a, b, c);
    }

    /// Keys in G1 (128 B), signature in G2 (256 B): hash to G2 + 2-pair pairing.
    function verifyMinPk(bytes calldata pk, bytes calldata sig, bytes calldata message, bytes calldata dst)
        external
        view
        returns (bool)
    {
        bytes memory h = BLS.hashToG2(message, dst);
        bytes memory pkm = pk;
        bytes memory sigm = sig;
        uint256 a;
        uint256 b;
        uint256 c;
        assembly ("memory-safe") {
            a := add(pkm, 0x20)
            b := add(h, 0x20)
            c := add(sigm, 0x20)
        }
        return BLS.pairingMinPk(a, b, c);
    }
}
