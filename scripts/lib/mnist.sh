# MNIST checks for the scripts in scripts/, sourced:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/mnist.sh"
# require_mnist PROGRAM DIR HOW: returns when DIR holds MNIST's training
# images (.gz or not); else says how to get it and exits 2. HOW: how to give
# the script the folder ("pass --data_dir=DIR").
require_mnist() {
  local program="$1" dir="$2" how="$3"
  [[ -n "$dir" && (-e "$dir/train-images-idx3-ubyte.gz" || -e "$dir/train-images-idx3-ubyte") ]] &&
    return 0
  cat >&2 <<MSG
$program: MNIST not found${dir:+ in '$dir'}.
Get it (about 11 MB, checksums verified) and point $program at it:
  scripts/get_mnist.sh \$HOME/mnist
  export MNIST_DIR=\$HOME/mnist
or $how.
MSG
  exit 2
}
