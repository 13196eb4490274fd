// Two independent towers (matmul, relu, matmul) over one input, summed: the
// cost placement puts one tower on each of two devices.
// Run it: `dflow run examples/towers.mlir --devices cpu:0,cpu:1`
// Draw it: `dflow viz examples/towers.mlir --devices cpu:0,cpu:1 --partition -o towers.svg`
func.func @main(%x: tensor<64x256xf32>, %a1: tensor<256x256xf32>, %a2: tensor<256x64xf32>,
                %b1: tensor<256x256xf32>, %b2: tensor<256x64xf32>) -> tensor<64x64xf32> {
  %ha = df.matmul %x, %a1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %ra = df.relu %ha : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %ya = df.matmul %ra, %a2 : (tensor<64x256xf32>, tensor<256x64xf32>) -> tensor<64x64xf32>
  %hb = df.matmul %x, %b1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %rb = df.relu %hb : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %yb = df.matmul %rb, %b2 : (tensor<64x256xf32>, tensor<256x64xf32>) -> tensor<64x64xf32>
  %y = df.add %ya, %yb : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
