// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// Test-only relay: runs calls in order in one transaction, as a third party's contract may run a proven
/// execution (executeGovernanceProofDirect is open to anyone) beside calls of its own.
contract Relay {
    function run(address[] calldata to, bytes[] calldata data) external {
        for (uint256 i; i < to.length; i++) {
            (bool ok, bytes memory r) = to[i].call(data[i]);
            if (!ok) {
                assembly ("memory-safe") {
                    revert(add(r, 0x20), mload(r))
                }
            }
        }
    }
}
