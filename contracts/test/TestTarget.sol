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

    /// A target that survives a failing inner call: heavy work in a try, a cheap branch when it fails (as routers,
    /// bridges and wallets do). With too little gas the try fails for want of gas and the call still succeeds.
    event Outcome(bool heavyDone);

    uint256 public heavyResult;

    function heavy(uint256 rounds) external {
        require(msg.sender == address(this), "TestTarget: internal");
        uint256 acc = rounds;
        for (uint256 i; i < rounds; ++i) {
            assembly ("memory-safe") {
                mstore(0x00, acc)
                mstore(0x20, i)
                acc := keccak256(0x00, 0x40)
            }
        }
        heavyResult = acc;
    }

    function tryHeavy(uint256 rounds) external payable {
        try this.heavy(rounds) {
            emit Outcome(true);
        } catch {
            emit Outcome(false);
        }
    }

    function fail() external pure {
        revert("TestTarget: fail");
    }
}
