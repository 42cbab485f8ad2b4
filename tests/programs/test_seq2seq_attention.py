"""A seq2seq translator in the style of the PyTorch tutorial: a GRU encoder over one sentence at a
time, an attention decoder that scores the encoder outputs from cat(embedded, hidden), bmm's the
weights into a context vector and feeds it through a GRU; teacher forcing decided per sentence
(by NumPy), NLLLoss on log_softmax outputs, two SGD optimizers; greedy decoding with topk at the
end. The "language" is reversing a sequence of tokens."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

SOS, EOS, WORDS = 0, 1, 12
HIDDEN, MAX_LEN = 24, 7


def pairs(rng, n):
    out = []
    for _ in range(n):
        src = list(rng.integers(2, WORDS, rng.integers(2, MAX_LEN - 1)))
        out.append((src + [EOS], src[::-1] + [EOS]))
    return out


def seq2seq(torch, init=None, steps=12):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size)

        def forward(self, input, hidden):
            embedded = self.embedding(input).view(1, 1, -1)
            output, hidden = self.gru(embedded, hidden)
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, 1, self.hidden_size)

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1, max_length=MAX_LEN):
            super().__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attn = nn.Linear(hidden_size * 2, max_length)
            self.attn_combine = nn.Linear(hidden_size * 2, hidden_size)
            self.dropout = nn.Dropout(dropout_p)
            self.gru = nn.GRU(hidden_size, hidden_size)
            self.out = nn.Linear(hidden_size, output_size)

        def forward(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input).view(1, 1, -1))
            attn_weights = F.softmax(self.attn(torch.cat((embedded[0], hidden[0]), 1)), dim=1)
            attn_applied = torch.bmm(attn_weights.unsqueeze(0), encoder_outputs.unsqueeze(0))
            output = torch.cat((embedded[0], attn_applied[0]), 1)
            output = F.relu(self.attn_combine(output).unsqueeze(0))
            output, hidden = self.gru(output, hidden)
            return F.log_softmax(self.out(output[0]), dim=1), hidden, attn_weights

    encoder = EncoderRNN(WORDS, HIDDEN)
    decoder = AttnDecoderRNN(HIDDEN, WORDS, dropout_p=0.0)
    result = {}
    start_from(torch, {"encoder": encoder, "decoder": decoder}, init, result)
    encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.05)
    decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.05)
    criterion = nn.NLLLoss()
    rng = np.random.default_rng(0)

    def train(input_tensor, target_tensor, teacher_forcing):
        encoder_hidden = encoder.initHidden()
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        input_length, target_length = input_tensor.size(0), target_tensor.size(0)
        encoder_outputs = torch.zeros(MAX_LEN, encoder.hidden_size)
        loss = 0
        for ei in range(input_length):
            encoder_output, encoder_hidden = encoder(input_tensor[ei], encoder_hidden)
            encoder_outputs[ei] = encoder_output[0, 0]
        decoder_input = torch.tensor([[SOS]])
        decoder_hidden = encoder_hidden
        for di in range(target_length):
            decoder_output, decoder_hidden, _ = decoder(decoder_input, decoder_hidden, encoder_outputs)
            loss += criterion(decoder_output, target_tensor[di])
            if teacher_forcing:
                decoder_input = target_tensor[di]
            else:
                topv, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze().detach()
                if decoder_input.item() == EOS:
                    break
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        return loss.item() / target_length

    losses = []
    for src, tgt in pairs(rng, steps):
        input_tensor = torch.tensor(src, dtype=torch.long).view(-1, 1)
        target_tensor = torch.tensor(tgt, dtype=torch.long).view(-1, 1)
        losses.append(train(input_tensor, target_tensor, rng.random() < 0.5))

    def evaluate(src):
        with torch.no_grad():
            input_tensor = torch.tensor(src, dtype=torch.long).view(-1, 1)
            encoder_hidden = encoder.initHidden()
            encoder_outputs = torch.zeros(MAX_LEN, encoder.hidden_size)
            for ei in range(input_tensor.size()[0]):
                encoder_output, encoder_hidden = encoder(input_tensor[ei], encoder_hidden)
                encoder_outputs[ei] += encoder_output[0, 0]
            decoder_input = torch.tensor([[SOS]])
            decoder_hidden = encoder_hidden
            words, attentions = [], torch.zeros(MAX_LEN, MAX_LEN)
            for di in range(MAX_LEN):
                decoder_output, decoder_hidden, decoder_attention = decoder(decoder_input, decoder_hidden,
                                                                            encoder_outputs)
                attentions[di] = decoder_attention.data
                topv, topi = decoder_output.data.topk(1)
                words.append(topi.item())
                if topi.item() == EOS:
                    break
                decoder_input = topi.squeeze().detach()
            return words, attentions[:di + 1]

    words, attentions = evaluate([3, 4, 5, EOS])
    result.update(losses=losses, words=np.array(words), attentions=numpy_of(attentions),
                  params={k: numpy_of(v) for k, v in decoder.named_parameters()})
    return result


def test_seq2seq_gru_attention_teacher_forcing():
    ref, got = compare_program(seq2seq)
    assert len(ref["losses"]) == 12
