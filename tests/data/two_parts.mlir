builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<2xf32>) attributes {df.arguments = array<i64: 0>, df.results = array<i64>, df.function_type = (tensor<2xf32>) -> tensor<2xf32>} {
      %a = df.exp %x {df.device = "cpu:0"} : (tensor<2xf32>) -> tensor<2xf32>
      df.send %a {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "cpu:1"} : (tensor<2xf32>) -> ()
      func.return
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main() -> tensor<2xf32> attributes {df.arguments = array<i64>, df.results = array<i64: 0>, df.function_type = (tensor<2xf32>) -> tensor<2xf32>} {
      %a = df.recv {df.device = "cpu:1", key = "main.k0", from = "cpu:0", to = "cpu:1"} : () -> tensor<2xf32>
      func.return %a : tensor<2xf32>
    }
  }
}
