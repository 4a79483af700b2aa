// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AbstractAccount} from "./AbstractAccount.sol";
import {ProofAnchor} from "./ProofAnchor.sol";

/// @title AccountFactory: one AbstractAccount per ADI URL, at the same address on every chain.
/// @notice Itself deployed through the deterministic CREATE2 deployer; an account is
/// CREATE2(this, salt = keccak256(adiUrl), initCode = AbstractAccount.creationCode ++ abi.encode(anchor, salt)).
contract AccountFactory {
    ProofAnchor public immutable anchor;

    event AccountCreated(address indexed account, bytes32 indexed adiHash, string adiUrl);

    constructor(ProofAnchor anchor_) {
        anchor = anchor_;
    }

    /// Deploys the account of `adiUrl` unless it exists; returns its address either way.
    function createAccount(string calldata adiUrl) external returns (address account) {
        bytes32 salt = keccak256(bytes(adiUrl));
        account = _predict(salt);
        if (account.code.length != 0) return account;
        AbstractAccount created = new AbstractAccount{salt: salt}(anchor, salt);
        account = address(created);
        emit AccountCreated(account, salt, adiUrl);
    }

    function getAddress(string calldata adiUrl) external view returns (address) {
        return _predict(keccak256(bytes(adiUrl)));
    }

    function isDeployed(string calldata adiUrl) external view returns (bool) {
        return _predict(keccak256(bytes(adiUrl))).code.length != 0;
    }

    function accountInitCodeHash(bytes32 adiHash) public view returns (bytes32) {
        return keccak256(abi.encodePacked(type(AbstractAccount).creationCode, abi.encode(anchor, adiHash)));
    }

    function _predict(bytes32 salt) internal view returns (address) {
        return address(
            uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, accountInitCodeHash(salt)))))
        );
    }
}
