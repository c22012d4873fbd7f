import torch


class Tiny(torch.nn.Module):
    def __init__(self, width: int = 4, vocab: int = 8) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, width)
        self.block = torch.nn.Linear(width, width)

    def forward(self, input_ids: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        return self.block(self.embedding(input_ids)) * scale
