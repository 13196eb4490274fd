// devices: gpu:0
// Indexing with indices read on the GPU, negative ones included (the inputs are
// integers in [-9, 9], every axis indexed has at least 10): an embedding lookup
// (f32) and one on axis 1 of i32 data, a gather_elements (f64), and scatter-adds
// with repeated indices (atomic adds of f32 and i32).
func.func @main(%table: tensor<12x5xf32>, %tokens: tensor<3x4xi64>, %m: tensor<2x10xi32>,
                %x: tensor<4x11xf64>, %at: tensor<3x6xi32>, %u: tensor<3x4x5xf32>)
    -> (tensor<3x4x5xf32>, tensor<2x3x4xi32>, tensor<3x6xf64>, tensor<12x5xf32>, tensor<2x10xi32>) {
  %e = df.gather %table, %tokens : (tensor<12x5xf32>, tensor<3x4xi64>) -> tensor<3x4x5xf32>
  %g = df.gather %m, %tokens {axis = 1 : i64} : (tensor<2x10xi32>, tensor<3x4xi64>) -> tensor<2x3x4xi32>
  %ge = df.gather_elements %x, %at {axis = 1 : i64} : (tensor<4x11xf64>, tensor<3x6xi32>) -> tensor<3x6xf64>
  %s = df.scatter_add %u, %tokens : (tensor<3x4x5xf32>, tensor<3x4xi64>) -> tensor<12x5xf32>
  %si = df.scatter_add %g, %tokens {axis = 1 : i64} : (tensor<2x3x4xi32>, tensor<3x4xi64>) -> tensor<2x10xi32>
  func.return %e, %g, %ge, %s, %si : tensor<3x4x5xf32>, tensor<2x3x4xi32>, tensor<3x6xf64>, tensor<12x5xf32>, tensor<2x10xi32>
}
