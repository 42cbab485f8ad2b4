"""Raschka, Liu and Mirjalili's "Machine Learning with PyTorch and Scikit-Learn", chapter 15 part 3
(rasbt/machine-learning-book ch15_part3.ipynb, the character-level language model) as written, the
Gutenberg download of The Mysterious Island replaced by a local text of the same form (its
'THE MYSTERIOUS ISLAND' start and 'End of the Project Gutenberg' end markers): the text cut by
text.find, char2int / char_array (np.array of the sorted characters) and np.int32 encodings with
the book's prints (char_array[text_encoded[15:21]] joined, 'Total Length:'), chunks of
seq_length + 1, a TextDataset over torch.tensor(text_chunks) returning .long() slices, a shuffled
DataLoader with drop_last, the RNN of Embedding, nn.LSTM(batch_first=True) stepped one character
at a time with (hidden, cell) from init_hidden, loss += loss_fn(...) summed over the sequence,
Adam, 'Epoch {epoch} loss: {loss:.4f}'; then Categorical(logits=...).sample((10,)) printed as
.numpy(), the sample() function (torch.reshape, model.eval(), last_char.view(1),
torch.squeeze(logits, 0), scaled logits, Categorical(...).sample(), str(char_array[last_char]))
and the softmax temperature prints. Smaller: 20 training steps of batch 16 (the book's 10000 of
64), 120 generated characters, embedding 64 and hidden 128 (256 and 512). Seeds as the book's
torch.manual_seed(1): both libraries draw PyTorch's CPU stream, shuffles and samples alike, so
the printed text is the same."""
import numpy as np
import pytest

from prog_helpers import captured_run, compare_program, printed_lines

TEXT = ("The Project Gutenberg eBook of The Mysterious Island, by Jules Verne\n\n"
        "THE MYSTERIOUS ISLAND\n\nPART 1--DROPPED FROM THE CLOUDS\n\nCHAPTER 1\n\n"
        "\"Are we rising again?\" \"No. On the contrary.\" \"Are we descending?\" \"Worse than that, captain! "
        "we are falling!\" \"For Heaven's sake heave out the ballast!\" \"There! the last sack is empty!\" "
        "\"Does the balloon rise?\" \"No!\" \"I hear a noise of dashing waves. The sea is below the car! "
        "It cannot be more than 500 feet from us!\" \"Overboard with every weight! ... everything!\" "
        "Such were the loud and startling words which resounded through the air, above the vast watery "
        "desert of the Pacific, about four o'clock in the evening of the 23rd of March, 1865. Few can "
        "possibly have forgotten the terrible storm from the northeast, in the middle of the equinox of "
        "that year. The tempest raged without intermission from the 18th to the 26th of March. Its "
        "ravages were terrible in America, Europe, and Asia, covering a distance of eighteen hundred "
        "miles, and extending obliquely to the equator from the thirty-fifth north parallel to the "
        "fortieth south parallel. Towns were overthrown, forests uprooted, coasts devastated by the "
        "mountains of water which were precipitated on them, vessels cast on the shore, which the "
        "published accounts numbered by hundreds, whole districts leveled by waterspouts which destroyed "
        "everything they passed over, several thousand people crushed on land or drowned at sea; such "
        "were the traces of its fury, left by this devastating tempest.\n\n"
        "*** End of the Project Gutenberg EBook of The Mysterious Island ***\n")


def char_rnn(torch, init=None, num_epochs=20):
    nn = torch.nn
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader
    device = torch.device("cpu")
    with captured_run(torch, seed=1) as out:
        # Reading and processing text
        text = TEXT  # with open('1268-0.txt', 'r', encoding="utf8") as fp: text=fp.read()
        start_indx = text.find('THE MYSTERIOUS ISLAND')
        end_indx = text.find('End of the Project Gutenberg')
        print(start_indx, end_indx)
        text = text[start_indx:end_indx]
        char_set = set(text)
        print('Total Length:', len(text))
        print('Unique Characters:', len(char_set))

        chars_sorted = sorted(char_set)
        char2int = {ch: i for i, ch in enumerate(chars_sorted)}
        char_array = np.array(chars_sorted)

        text_encoded = np.array(
            [char2int[ch] for ch in text],
            dtype=np.int32)

        print('Text encoded shape: ', text_encoded.shape)

        print(text[:15], '     == Encoding ==> ', text_encoded[:15])
        print(text_encoded[15:21], ' == Reverse  ==> ', ''.join(char_array[text_encoded[15:21]]))

        for ex in text_encoded[:5]:
            print('{} -> {}'.format(ex, char_array[ex]))

        seq_length = 40
        chunk_size = seq_length + 1

        text_chunks = [text_encoded[i:i + chunk_size]
                       for i in range(len(text_encoded) - chunk_size + 1)]

        ## inspection:
        for seq in text_chunks[:1]:
            input_seq = seq[:seq_length]
            target = seq[seq_length]
            print(input_seq, ' -> ', target)
            print(repr(''.join(char_array[input_seq])),
                  ' -> ', repr(''.join(char_array[target])))

        class TextDataset(Dataset):
            def __init__(self, text_chunks):
                self.text_chunks = text_chunks

            def __len__(self):
                return len(self.text_chunks)

            def __getitem__(self, idx):
                text_chunk = self.text_chunks[idx]
                return text_chunk[:-1].long(), text_chunk[1:].long()

        seq_dataset = TextDataset(torch.tensor(np.array(text_chunks)))

        for i, (seq, target) in enumerate(seq_dataset):
            print(' Input (x):', repr(''.join(char_array[seq])))
            print('Target (y):', repr(''.join(char_array[target])))
            print()
            if i == 1:
                break

        batch_size = 16

        torch.manual_seed(1)
        seq_dl = DataLoader(seq_dataset, batch_size=batch_size, shuffle=True, drop_last=True)

        # Building a character-level RNN model
        class RNN(nn.Module):
            def __init__(self, vocab_size, embed_dim, rnn_hidden_size):
                super().__init__()
                self.embedding = nn.Embedding(vocab_size, embed_dim)
                self.rnn_hidden_size = rnn_hidden_size
                self.rnn = nn.LSTM(embed_dim, rnn_hidden_size,
                                   batch_first=True)
                self.fc = nn.Linear(rnn_hidden_size, vocab_size)

            def forward(self, x, hidden, cell):
                out = self.embedding(x).unsqueeze(1)
                out, (hidden, cell) = self.rnn(out, (hidden, cell))
                out = self.fc(out).reshape(out.size(0), -1)
                return out, hidden, cell

            def init_hidden(self, batch_size):
                hidden = torch.zeros(1, batch_size, self.rnn_hidden_size)
                cell = torch.zeros(1, batch_size, self.rnn_hidden_size)
                return hidden.to(device), cell.to(device)

        vocab_size = len(char_array)
        embed_dim = 64
        rnn_hidden_size = 128

        torch.manual_seed(1)
        model = RNN(vocab_size, embed_dim, rnn_hidden_size)
        model = model.to(device)
        print(model)

        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.005)

        torch.manual_seed(1)

        for epoch in range(num_epochs):
            hidden, cell = model.init_hidden(batch_size)
            seq_batch, target_batch = next(iter(seq_dl))
            seq_batch = seq_batch.to(device)
            target_batch = target_batch.to(device)
            optimizer.zero_grad()
            loss = 0
            for c in range(seq_length):
                pred, hidden, cell = model(seq_batch[:, c], hidden, cell)
                loss += loss_fn(pred, target_batch[:, c])
            loss.backward()
            optimizer.step()
            loss = loss.item() / seq_length
            if epoch % 5 == 0:
                print(f'Epoch {epoch} loss: {loss:.4f}')

        # Evaluation phase: generating new text passages
        Categorical = torch.distributions.categorical.Categorical

        torch.manual_seed(1)

        logits = torch.tensor([[1.0, 1.0, 1.0]])

        print('Probabilities:', nn.functional.softmax(logits, dim=1).numpy()[0])

        m = Categorical(logits=logits)
        samples = m.sample((10,))

        print(samples.numpy())

        torch.manual_seed(1)

        logits = torch.tensor([[1.0, 1.0, 3.0]])

        print('Probabilities:', nn.functional.softmax(logits, dim=1).numpy()[0])

        m = Categorical(logits=logits)
        samples = m.sample((10,))

        print(samples.numpy())

        def sample(model, starting_str,
                   len_generated_text=500,
                   scale_factor=1.0):

            encoded_input = torch.tensor([char2int[s] for s in starting_str])
            encoded_input = torch.reshape(encoded_input, (1, -1))

            generated_str = starting_str

            model.eval()
            hidden, cell = model.init_hidden(1)
            hidden = hidden.to('cpu')
            cell = cell.to('cpu')
            for c in range(len(starting_str) - 1):
                _, hidden, cell = model(encoded_input[:, c].view(1), hidden, cell)

            last_char = encoded_input[:, -1]
            for i in range(len_generated_text):
                logits, hidden, cell = model(last_char.view(1), hidden, cell)
                logits = torch.squeeze(logits, 0)
                scaled_logits = logits * scale_factor
                m = Categorical(logits=scaled_logits)
                last_char = m.sample()
                generated_str += str(char_array[last_char])

            return generated_str

        torch.manual_seed(1)
        model.to('cpu')
        print(sample(model, starting_str='The island', len_generated_text=120))

        logits = torch.tensor([[1.0, 1.0, 3.0]])

        print('Probabilities before scaling:        ', nn.functional.softmax(logits, dim=1).numpy()[0])

        print('Probabilities after scaling with 0.5:', nn.functional.softmax(0.5 * logits, dim=1).numpy()[0])

        print('Probabilities after scaling with 0.1:', nn.functional.softmax(0.1 * logits, dim=1).numpy()[0])

        torch.manual_seed(1)
        print(sample(model, starting_str='The island', len_generated_text=120, scale_factor=2.0))

        torch.manual_seed(1)
        print(sample(model, starting_str='The island', len_generated_text=120, scale_factor=0.5))
    return {"printed": printed_lines(out)}


def test_mlbook_char_rnn():
    ref, got = compare_program(char_rnn, rtol=1e-3, atol=1e-4)
    printed = got["printed"]
    assert printed[1] == "Total Length: 1425" and any(line.startswith("Epoch 15 loss: ") for line in printed)
    assert sum(line.startswith("The island") for line in printed) == 3  # generated text may hold newlines
