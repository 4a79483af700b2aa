// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// Test-only call target: records who called with what, so tests can see that a call ran exactly once.
contract TestTarget {
    uint256 public calls;
    uint256 public lastValue;
    address public lastCaller;
    bytes32 public lastArg;

    event Called(address indexed caller, uint256 value, bytes32 arg);

    function record(bytes32 arg) external payable {
        calls += 1;
        lastValue = msg.value;
        lastCaller = msg.sender;
        lastArg = arg;
        emit Called(msg.sender, msg.value, arg);
    }

    function fail() external pure {
        revert("TestTarget: fail");
    }
}
