# Debian packages (`cpack -G DEB` in a build tree; scripts/test_packages.sh makes and installs them):
#   vin-inspect        the binary and its man page: inspect-model, inspect-config, diff; no
#                      LibTorch, so a CI job that only diffs metadata installs a few MB
#   vin-inspect-torch  the LibTorch plugin (capture, compare, --load-with-libtorch), depending on
#                      vin-inspect of the same version and on the LibTorch it was linked with
# Dependencies come from dpkg-shlibdeps (package dpkg-dev). The library for C++ users (component
# dev) is installed by `cmake --install`, not packaged.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vin-inspect)
set(CPACK_PACKAGE_VENDOR "vin-inspect")
set(CPACK_PACKAGE_CONTACT "vin-inspect developers <vin-inspect@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_CLI_PACKAGE_NAME vin-inspect)
set(CPACK_COMPONENT_CLI_DESCRIPTION
    "Inspect PyTorch TorchScript archives\n vin-inspect describes a TorchScript archive's modules, tensors, attributes and\n signatures, the configuration tree it carries, and the differences between two\n archives, as JSON records or tables, without loading or running the archive.\n Install vin-inspect-torch for capture and compare.")
set(CPACK_COMPONENTS_ALL cli)
if(VIN_HAVE_TORCH)
  list(APPEND CPACK_COMPONENTS_ALL torch)
  set(CPACK_DEBIAN_TORCH_PACKAGE_NAME vin-inspect-torch)
  set(CPACK_COMPONENT_TORCH_DEPENDS cli)
  set(CPACK_COMPONENT_TORCH_DESCRIPTION
      "LibTorch plugin of vin-inspect: capture and compare\n Runs a TorchScript archive's forward with LibTorch ${Torch_VERSION} and records what\n flows through each module (vin-inspect capture), compares two runs (vin-inspect\n compare), and loads archives the built-in reader refuses (--load-with-libtorch).")
endif()
include(CPack)
