"""thuml's Autoformer (layers/Embed.py, layers/AutoCorrelation.py, layers/Autoformer_EncDec.py,
models/Autoformer.py, exp/exp_main.py, utils/tools.py) on a local multivariate series replacing the
ETT/electricity CSV: the TokenEmbedding's Conv1d(padding_mode='circular') with a padding chosen by
torch.__version__ >= '1.5.0' and kaiming_normal_(mode='fan_in', nonlinearity='leaky_relu'),
FixedEmbedding (w.require_grad = False, nn.Parameter(w, requires_grad=False) assigned to an
Embedding's weight, .detach()) or TimeFeatureEmbedding, series_decomp's moving average by AvgPool1d
over repeated ends, my_Layernorm, AutoCorrelation (torch.fft.rfft of permuted queries and keys,
q_fft * torch.conj(k_fft), torch.fft.irfft(n=L); the training aggregation by torch.topk, a stack of
mean_value[:, index[i]], torch.roll(-int(index[i])) and repeat; the inference aggregation by
torch.gather on values.repeat(1, 1, 1, 2)), the decoder's trend accumulation and circular
projection Conv1d; Exp_Main's loop (a DataLoader over float64 NumPy windows, .float(), the decoder
input from torch.zeros_like and torch.cat, batch_y passed as the encoder mask, MSELoss, Adam),
vali's np.average of a list of 0-d tensors, EarlyStopping saving the state_dict, adjust_learning_rate
('type1'), and test's torch.load of the best checkpoint with predictions collected as NumPy."""
import argparse
import math
import os

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from


def autoformer_modules(torch):
    nn = torch.nn
    F = torch.nn.functional

    # ---- layers/Embed.py ----
    class PositionalEmbedding(nn.Module):
        def __init__(self, d_model, max_len=5000):
            super(PositionalEmbedding, self).__init__()
            # Compute the positional encodings once in log space.
            pe = torch.zeros(max_len, d_model).float()
            pe.require_grad = False
            position = torch.arange(0, max_len).float().unsqueeze(1)
            div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer('pe', pe)

        def forward(self, x):
            return self.pe[:, :x.size(1)]

    class TokenEmbedding(nn.Module):
        def __init__(self, c_in, d_model):
            super(TokenEmbedding, self).__init__()
            padding = 1 if torch.__version__ >= '1.5.0' else 2
            self.tokenConv = nn.Conv1d(in_channels=c_in, out_channels=d_model,
                                       kernel_size=3, padding=padding, padding_mode='circular', bias=False)
            for m in self.modules():
                if isinstance(m, nn.Conv1d):
                    nn.init.kaiming_normal_(m.weight, mode='fan_in', nonlinearity='leaky_relu')

        def forward(self, x):
            x = self.tokenConv(x.permute(0, 2, 1)).transpose(1, 2)
            return x

    class FixedEmbedding(nn.Module):
        def __init__(self, c_in, d_model):
            super(FixedEmbedding, self).__init__()
            w = torch.zeros(c_in, d_model).float()
            w.require_grad = False
            position = torch.arange(0, c_in).float().unsqueeze(1)
            div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
            w[:, 0::2] = torch.sin(position * div_term)
            w[:, 1::2] = torch.cos(position * div_term)
            self.emb = nn.Embedding(c_in, d_model)
            self.emb.weight = nn.Parameter(w, requires_grad=False)

        def forward(self, x):
            return self.emb(x).detach()

    class TemporalEmbedding(nn.Module):
        def __init__(self, d_model, embed_type='fixed', freq='h'):
            super(TemporalEmbedding, self).__init__()
            minute_size = 4
            hour_size = 24
            weekday_size = 7
            day_size = 32
            month_size = 13
            Embed = FixedEmbedding if embed_type == 'fixed' else nn.Embedding
            if freq == 't':
                self.minute_embed = Embed(minute_size, d_model)
            self.hour_embed = Embed(hour_size, d_model)
            self.weekday_embed = Embed(weekday_size, d_model)
            self.day_embed = Embed(day_size, d_model)
            self.month_embed = Embed(month_size, d_model)

        def forward(self, x):
            x = x.long()
            minute_x = self.minute_embed(x[:, :, 4]) if hasattr(self, 'minute_embed') else 0.
            hour_x = self.hour_embed(x[:, :, 3])
            weekday_x = self.weekday_embed(x[:, :, 2])
            day_x = self.day_embed(x[:, :, 1])
            month_x = self.month_embed(x[:, :, 0])
            return hour_x + weekday_x + day_x + month_x + minute_x

    class TimeFeatureEmbedding(nn.Module):
        def __init__(self, d_model, embed_type='timeF', freq='h'):
            super(TimeFeatureEmbedding, self).__init__()
            freq_map = {'h': 4, 't': 5, 's': 6, 'm': 1, 'a': 1, 'w': 2, 'd': 3, 'b': 3}
            d_inp = freq_map[freq]
            self.embed = nn.Linear(d_inp, d_model, bias=False)

        def forward(self, x):
            return self.embed(x)

    class DataEmbedding_wo_pos(nn.Module):
        def __init__(self, c_in, d_model, embed_type='fixed', freq='h', dropout=0.1):
            super(DataEmbedding_wo_pos, self).__init__()
            self.value_embedding = TokenEmbedding(c_in=c_in, d_model=d_model)
            self.position_embedding = PositionalEmbedding(d_model=d_model)
            self.temporal_embedding = TemporalEmbedding(d_model=d_model, embed_type=embed_type,
                                                        freq=freq) if embed_type != 'timeF' else TimeFeatureEmbedding(
                d_model=d_model, embed_type=embed_type, freq=freq)
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, x, x_mark):
            x = self.value_embedding(x) + self.temporal_embedding(x_mark)
            return self.dropout(x)

    # ---- layers/AutoCorrelation.py ----
    class AutoCorrelation(nn.Module):
        """
        AutoCorrelation Mechanism with the following two phases:
        (1) period-based dependencies discovery
        (2) time delay aggregation
        This block can replace the self-attention family mechanism seamlessly.
        """

        def __init__(self, mask_flag=True, factor=1, scale=None, attention_dropout=0.1, output_attention=False):
            super(AutoCorrelation, self).__init__()
            self.factor = factor
            self.scale = scale
            self.mask_flag = mask_flag
            self.output_attention = output_attention
            self.dropout = nn.Dropout(attention_dropout)

        def time_delay_agg_training(self, values, corr):
            """
            SpeedUp version of Autocorrelation (a batch-normalization style design)
            This is for the training phase.
            """
            head = values.shape[1]
            channel = values.shape[2]
            length = values.shape[3]
            # find top k
            top_k = int(self.factor * math.log(length))
            mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
            index = torch.topk(torch.mean(mean_value, dim=0), top_k, dim=-1)[1]
            weights = torch.stack([mean_value[:, index[i]] for i in range(top_k)], dim=-1)
            # update corr
            tmp_corr = torch.softmax(weights, dim=-1)
            # aggregation
            tmp_values = values
            delays_agg = torch.zeros_like(values).float()
            for i in range(top_k):
                pattern = torch.roll(tmp_values, -int(index[i]), -1)
                delays_agg = delays_agg + pattern * \
                    (tmp_corr[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length))
            return delays_agg

        def time_delay_agg_inference(self, values, corr):
            """
            SpeedUp version of Autocorrelation (a batch-normalization style design)
            This is for the inference phase.
            """
            batch = values.shape[0]
            head = values.shape[1]
            channel = values.shape[2]
            length = values.shape[3]
            # index init
            init_index = torch.arange(length).unsqueeze(0).unsqueeze(0).unsqueeze(0).repeat(batch, head, channel,
                                                                                             1).to(values.device)
            # find top k
            top_k = int(self.factor * math.log(length))
            mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
            weights, delay = torch.topk(mean_value, top_k, dim=-1)
            # update corr
            tmp_corr = torch.softmax(weights, dim=-1)
            # aggregation
            tmp_values = values.repeat(1, 1, 1, 2)
            delays_agg = torch.zeros_like(values).float()
            for i in range(top_k):
                tmp_delay = init_index + delay[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel,
                                                                                                   length)
                pattern = torch.gather(tmp_values, dim=-1, index=tmp_delay)
                delays_agg = delays_agg + pattern * \
                    (tmp_corr[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length))
            return delays_agg

        def forward(self, queries, keys, values, attn_mask):
            B, L, H, E = queries.shape
            _, S, _, D = values.shape
            if L > S:
                zeros = torch.zeros_like(queries[:, :(L - S), :]).float()
                values = torch.cat([values, zeros], dim=1)
                keys = torch.cat([keys, zeros], dim=1)
            else:
                values = values[:, :L, :, :]
                keys = keys[:, :L, :, :]
            # period-based dependencies
            q_fft = torch.fft.rfft(queries.permute(0, 2, 3, 1).contiguous(), dim=-1)
            k_fft = torch.fft.rfft(keys.permute(0, 2, 3, 1).contiguous(), dim=-1)
            res = q_fft * torch.conj(k_fft)
            corr = torch.fft.irfft(res, n=L, dim=-1)
            # time delay agg
            if self.training:
                V = self.time_delay_agg_training(values.permute(0, 2, 3, 1).contiguous(), corr).permute(0, 3, 1, 2)
            else:
                V = self.time_delay_agg_inference(values.permute(0, 2, 3, 1).contiguous(), corr).permute(0, 3, 1, 2)
            if self.output_attention:
                return (V.contiguous(), corr.permute(0, 3, 1, 2))
            else:
                return (V.contiguous(), None)

    class AutoCorrelationLayer(nn.Module):
        def __init__(self, correlation, d_model, n_heads, d_keys=None, d_values=None):
            super(AutoCorrelationLayer, self).__init__()
            d_keys = d_keys or (d_model // n_heads)
            d_values = d_values or (d_model // n_heads)
            self.inner_correlation = correlation
            self.query_projection = nn.Linear(d_model, d_keys * n_heads)
            self.key_projection = nn.Linear(d_model, d_keys * n_heads)
            self.value_projection = nn.Linear(d_model, d_values * n_heads)
            self.out_projection = nn.Linear(d_values * n_heads, d_model)
            self.n_heads = n_heads

        def forward(self, queries, keys, values, attn_mask):
            B, L, _ = queries.shape
            _, S, _ = keys.shape
            H = self.n_heads
            queries = self.query_projection(queries).view(B, L, H, -1)
            keys = self.key_projection(keys).view(B, S, H, -1)
            values = self.value_projection(values).view(B, S, H, -1)
            out, attn = self.inner_correlation(queries, keys, values, attn_mask)
            out = out.view(B, L, -1)
            return self.out_projection(out), attn

    # ---- layers/Autoformer_EncDec.py ----
    class my_Layernorm(nn.Module):
        """
        Special designed layernorm for the seasonal part
        """

        def __init__(self, channels):
            super(my_Layernorm, self).__init__()
            self.layernorm = nn.LayerNorm(channels)

        def forward(self, x):
            x_hat = self.layernorm(x)
            bias = torch.mean(x_hat, dim=1).unsqueeze(1).repeat(1, x.shape[1], 1)
            return x_hat - bias

    class moving_avg(nn.Module):
        """
        Moving average block to highlight the trend of time series
        """

        def __init__(self, kernel_size, stride):
            super(moving_avg, self).__init__()
            self.kernel_size = kernel_size
            self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=0)

        def forward(self, x):
            # padding on the both ends of time series
            front = x[:, 0:1, :].repeat(1, (self.kernel_size - 1) // 2, 1)
            end = x[:, -1:, :].repeat(1, (self.kernel_size - 1) // 2, 1)
            x = torch.cat([front, x, end], dim=1)
            x = self.avg(x.permute(0, 2, 1))
            x = x.permute(0, 2, 1)
            return x

    class series_decomp(nn.Module):
        """
        Series decomposition block
        """

        def __init__(self, kernel_size):
            super(series_decomp, self).__init__()
            self.moving_avg = moving_avg(kernel_size, stride=1)

        def forward(self, x):
            moving_mean = self.moving_avg(x)
            res = x - moving_mean
            return res, moving_mean

    class EncoderLayer(nn.Module):
        """
        Autoformer encoder layer with the progressive decomposition architecture
        """

        def __init__(self, attention, d_model, d_ff=None, moving_avg=25, dropout=0.1, activation="relu"):
            super(EncoderLayer, self).__init__()
            d_ff = d_ff or 4 * d_model
            self.attention = attention
            self.conv1 = nn.Conv1d(in_channels=d_model, out_channels=d_ff, kernel_size=1, bias=False)
            self.conv2 = nn.Conv1d(in_channels=d_ff, out_channels=d_model, kernel_size=1, bias=False)
            self.decomp1 = series_decomp(moving_avg)
            self.decomp2 = series_decomp(moving_avg)
            self.dropout = nn.Dropout(dropout)
            self.activation = F.relu if activation == "relu" else F.gelu

        def forward(self, x, attn_mask=None):
            new_x, attn = self.attention(
                x, x, x,
                attn_mask=attn_mask
            )
            x = x + self.dropout(new_x)
            x, _ = self.decomp1(x)
            y = x
            y = self.dropout(self.activation(self.conv1(y.transpose(-1, 1))))
            y = self.dropout(self.conv2(y).transpose(-1, 1))
            res, _ = self.decomp2(x + y)
            return res, attn

    class Encoder(nn.Module):
        """
        Autoformer encoder
        """

        def __init__(self, attn_layers, conv_layers=None, norm_layer=None):
            super(Encoder, self).__init__()
            self.attn_layers = nn.ModuleList(attn_layers)
            self.conv_layers = nn.ModuleList(conv_layers) if conv_layers is not None else None
            self.norm = norm_layer

        def forward(self, x, attn_mask=None):
            attns = []
            if self.conv_layers is not None:
                for attn_layer, conv_layer in zip(self.attn_layers, self.conv_layers):
                    x, attn = attn_layer(x, attn_mask=attn_mask)
                    x = conv_layer(x)
                    attns.append(attn)
                x, attn = self.attn_layers[-1](x)
                attns.append(attn)
            else:
                for attn_layer in self.attn_layers:
                    x, attn = attn_layer(x, attn_mask=attn_mask)
                    attns.append(attn)
            if self.norm is not None:
                x = self.norm(x)
            return x, attns

    class DecoderLayer(nn.Module):
        """
        Autoformer decoder layer with the progressive decomposition architecture
        """

        def __init__(self, self_attention, cross_attention, d_model, c_out, d_ff=None,
                     moving_avg=25, dropout=0.1, activation="relu"):
            super(DecoderLayer, self).__init__()
            d_ff = d_ff or 4 * d_model
            self.self_attention = self_attention
            self.cross_attention = cross_attention
            self.conv1 = nn.Conv1d(in_channels=d_model, out_channels=d_ff, kernel_size=1, bias=False)
            self.conv2 = nn.Conv1d(in_channels=d_ff, out_channels=d_model, kernel_size=1, bias=False)
            self.decomp1 = series_decomp(moving_avg)
            self.decomp2 = series_decomp(moving_avg)
            self.decomp3 = series_decomp(moving_avg)
            self.dropout = nn.Dropout(dropout)
            self.projection = nn.Conv1d(in_channels=d_model, out_channels=c_out, kernel_size=3, stride=1, padding=1,
                                        padding_mode='circular', bias=False)
            self.activation = F.relu if activation == "relu" else F.gelu

        def forward(self, x, cross, x_mask=None, cross_mask=None):
            x = x + self.dropout(self.self_attention(
                x, x, x,
                attn_mask=x_mask
            )[0])
            x, trend1 = self.decomp1(x)
            x = x + self.dropout(self.cross_attention(
                x, cross, cross,
                attn_mask=cross_mask
            )[0])
            x, trend2 = self.decomp2(x)
            y = x
            y = self.dropout(self.activation(self.conv1(y.transpose(-1, 1))))
            y = self.dropout(self.conv2(y).transpose(-1, 1))
            x, trend3 = self.decomp3(x + y)
            residual_trend = trend1 + trend2 + trend3
            residual_trend = self.projection(residual_trend.permute(0, 2, 1)).transpose(1, 2)
            return x, residual_trend

    class Decoder(nn.Module):
        """
        Autoformer encoder
        """

        def __init__(self, layers, norm_layer=None, projection=None):
            super(Decoder, self).__init__()
            self.layers = nn.ModuleList(layers)
            self.norm = norm_layer
            self.projection = projection

        def forward(self, x, cross, x_mask=None, cross_mask=None, trend=None):
            for layer in self.layers:
                x, residual_trend = layer(x, cross, x_mask=x_mask, cross_mask=cross_mask)
                trend = trend + residual_trend
            if self.norm is not None:
                x = self.norm(x)
            if self.projection is not None:
                x = self.projection(x)
            return x, trend

    # ---- models/Autoformer.py ----
    class Model(nn.Module):
        """
        Autoformer is the first method to achieve the series-wise connection,
        with inherent O(LlogL) complexity
        """

        def __init__(self, configs):
            super(Model, self).__init__()
            self.seq_len = configs.seq_len
            self.label_len = configs.label_len
            self.pred_len = configs.pred_len
            self.output_attention = configs.output_attention
            # Decomp
            kernel_size = configs.moving_avg
            self.decomp = series_decomp(kernel_size)
            # Embedding
            # The series-wise connection inherently contains the sequential information.
            # Thus, we can discard the position embedding of transformers.
            self.enc_embedding = DataEmbedding_wo_pos(configs.enc_in, configs.d_model, configs.embed, configs.freq,
                                                      configs.dropout)
            self.dec_embedding = DataEmbedding_wo_pos(configs.dec_in, configs.d_model, configs.embed, configs.freq,
                                                      configs.dropout)
            # Encoder
            self.encoder = Encoder(
                [
                    EncoderLayer(
                        AutoCorrelationLayer(
                            AutoCorrelation(False, configs.factor, attention_dropout=configs.dropout,
                                            output_attention=configs.output_attention),
                            configs.d_model, configs.n_heads),
                        configs.d_model,
                        configs.d_ff,
                        moving_avg=configs.moving_avg,
                        dropout=configs.dropout,
                        activation=configs.activation
                    ) for l in range(configs.e_layers)
                ],
                norm_layer=my_Layernorm(configs.d_model)
            )
            # Decoder
            self.decoder = Decoder(
                [
                    DecoderLayer(
                        AutoCorrelationLayer(
                            AutoCorrelation(True, configs.factor, attention_dropout=configs.dropout,
                                            output_attention=False),
                            configs.d_model, configs.n_heads),
                        AutoCorrelationLayer(
                            AutoCorrelation(False, configs.factor, attention_dropout=configs.dropout,
                                            output_attention=False),
                            configs.d_model, configs.n_heads),
                        configs.d_model,
                        configs.c_out,
                        configs.d_ff,
                        moving_avg=configs.moving_avg,
                        dropout=configs.dropout,
                        activation=configs.activation,
                    )
                    for l in range(configs.d_layers)
                ],
                norm_layer=my_Layernorm(configs.d_model),
                projection=nn.Linear(configs.d_model, configs.c_out, bias=True)
            )

        def forward(self, x_enc, x_mark_enc, x_dec, x_mark_dec,
                    enc_self_mask=None, dec_self_mask=None, dec_enc_mask=None):
            # decomp init
            mean = torch.mean(x_enc, dim=1).unsqueeze(1).repeat(1, self.pred_len, 1)
            zeros = torch.zeros([x_dec.shape[0], self.pred_len, x_dec.shape[2]], device=x_enc.device)
            seasonal_init, trend_init = self.decomp(x_enc)
            # decoder input
            trend_init = torch.cat([trend_init[:, -self.label_len:, :], mean], dim=1)
            seasonal_init = torch.cat([seasonal_init[:, -self.label_len:, :], zeros], dim=1)
            # enc
            enc_out = self.enc_embedding(x_enc, x_mark_enc)
            enc_out, attns = self.encoder(enc_out, attn_mask=enc_self_mask)
            # dec
            dec_out = self.dec_embedding(seasonal_init, x_mark_dec)
            seasonal_part, trend_part = self.decoder(dec_out, enc_out, x_mask=dec_self_mask, cross_mask=dec_enc_mask,
                                                     trend=trend_init)
            # final
            dec_out = trend_part + seasonal_part
            if self.output_attention:
                return dec_out[:, -self.pred_len:, :], attns
            else:
                return dec_out[:, -self.pred_len:, :]  # [B, L, D]

    return Model


def series(n=160, channels=3, seed=0):
    """A daily/weekly-seasonal multivariate series with hourly time marks (month, day, weekday, hour)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    data = np.stack([np.sin(2 * np.pi * t / 24 + c) + 0.3 * np.sin(2 * np.pi * t / (24 * 7)) + 0.01 * c * t
                     for c in range(channels)], 1) + 0.1 * rng.standard_normal((n, channels))
    hour, day = t % 24, t // 24
    marks_fixed = np.stack([1 + (day // 30) % 12, 1 + day % 30, day % 7, hour], 1).astype(np.float64)
    # utils/timefeatures.py: HourOfDay, DayOfWeek, DayOfMonth, DayOfYear scaled to [-0.5, 0.5]
    marks_timef = np.stack([hour / 23.0 - 0.5, (day % 7) / 6.0 - 0.5, (day % 30) / 30.0 - 0.5, day / 365.0 - 0.5], 1)
    return data, marks_fixed, marks_timef


def autoformer_program(torch, init=None, embed="timeF", train_epochs=2, checkpoints=None):
    nn = torch.nn
    optim = torch.optim
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader
    Model = autoformer_modules(torch)
    args = argparse.Namespace(
        seq_len=24, label_len=12, pred_len=12, enc_in=3, dec_in=3, c_out=3, d_model=16, n_heads=2, e_layers=2,
        d_layers=1, d_ff=32, moving_avg=5, factor=1, dropout=0.05, embed=embed, freq='h', activation='gelu',
        output_attention=False, features='M', learning_rate=1e-3, batch_size=8, train_epochs=train_epochs,
        patience=3, lradj='type1', use_amp=False, checkpoints=checkpoints)
    torch.manual_seed(0)
    device = torch.device('cpu')

    # ---- data_provider/data_loader.py's Dataset_Custom over local arrays (scaled as StandardScaler) ----
    data, marks_fixed, marks_timef = series()
    marks = marks_timef if embed == 'timeF' else marks_fixed
    train_part = data[:100]
    data = (data - train_part.mean(0)) / train_part.std(0)

    class Dataset_Custom(Dataset):
        def __init__(self, flag='train'):
            borders = {'train': (0, 100), 'val': (100 - args.seq_len, 130), 'test': (130 - args.seq_len, 160)}
            self.border1, self.border2 = borders[flag]
            self.data_x = data[self.border1:self.border2]
            self.data_y = data[self.border1:self.border2]
            self.data_stamp = marks[self.border1:self.border2]

        def __getitem__(self, index):
            s_begin = index
            s_end = s_begin + args.seq_len
            r_begin = s_end - args.label_len
            r_end = r_begin + args.label_len + args.pred_len
            seq_x = self.data_x[s_begin:s_end]
            seq_y = self.data_y[r_begin:r_end]
            seq_x_mark = self.data_stamp[s_begin:s_end]
            seq_y_mark = self.data_stamp[r_begin:r_end]
            return seq_x, seq_y, seq_x_mark, seq_y_mark

        def __len__(self):
            return len(self.data_x) - args.seq_len - args.pred_len + 1

    def data_provider(flag):
        shuffle_flag, drop_last = (False, False) if flag == 'test' else (True, True)
        data_set = Dataset_Custom(flag)
        data_loader = DataLoader(data_set, batch_size=args.batch_size, shuffle=shuffle_flag, num_workers=0,
                                 drop_last=drop_last)
        return data_set, data_loader

    # ---- utils/tools.py ----
    def adjust_learning_rate(optimizer, epoch, args):
        # lr = args.learning_rate * (0.2 ** (epoch // 2))
        if args.lradj == 'type1':
            lr_adjust = {epoch: args.learning_rate * (0.5 ** ((epoch - 1) // 1))}
        elif args.lradj == 'type2':
            lr_adjust = {2: 5e-5, 4: 1e-5, 6: 5e-6, 8: 1e-6, 10: 5e-7, 15: 1e-7, 20: 5e-8}
        if epoch in lr_adjust.keys():
            lr = lr_adjust[epoch]
            for param_group in optimizer.param_groups:
                param_group['lr'] = lr

    class EarlyStopping:
        def __init__(self, patience=7, verbose=False, delta=0):
            self.patience = patience
            self.verbose = verbose
            self.counter = 0
            self.best_score = None
            self.early_stop = False
            self.val_loss_min = np.inf
            self.delta = delta

        def __call__(self, val_loss, model, path):
            score = -val_loss
            if self.best_score is None:
                self.best_score = score
                self.save_checkpoint(val_loss, model, path)
            elif score < self.best_score + self.delta:
                self.counter += 1
                if self.counter >= self.patience:
                    self.early_stop = True
            else:
                self.best_score = score
                self.save_checkpoint(val_loss, model, path)
                self.counter = 0

        def save_checkpoint(self, val_loss, model, path):
            torch.save(model.state_dict(), path + '/' + 'checkpoint.pth')
            self.val_loss_min = val_loss

    # ---- exp/exp_main.py ----
    model = Model(args).float()
    result = {}
    start_from(torch, model, init, result)

    def forward(batch_x, batch_y, batch_x_mark, batch_y_mark):
        batch_x = batch_x.float().to(device)
        batch_y = batch_y.float().to(device)
        batch_x_mark = batch_x_mark.float().to(device)
        batch_y_mark = batch_y_mark.float().to(device)
        # decoder input
        dec_inp = torch.zeros_like(batch_y[:, -args.pred_len:, :]).float()
        dec_inp = torch.cat([batch_y[:, :args.label_len, :], dec_inp], dim=1).float().to(device)
        # encoder - decoder
        if args.output_attention:
            outputs = model(batch_x, batch_x_mark, dec_inp, batch_y_mark)[0]
        else:
            outputs = model(batch_x, batch_x_mark, dec_inp, batch_y_mark, batch_y)
        f_dim = -1 if args.features == 'MS' else 0
        outputs = outputs[:, -args.pred_len:, f_dim:]
        batch_y = batch_y[:, -args.pred_len:, f_dim:].to(device)
        return outputs, batch_y

    def vali(vali_data, vali_loader, criterion):
        total_loss = []
        model.eval()
        with torch.no_grad():
            for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(vali_loader):
                outputs, batch_y = forward(batch_x, batch_y, batch_x_mark, batch_y_mark)
                pred = outputs.detach().cpu()
                true = batch_y.detach().cpu()
                loss = criterion(pred, true)
                total_loss.append(loss)
        total_loss = np.average(total_loss)
        model.train()
        return total_loss

    train_data, train_loader = data_provider(flag='train')
    vali_data, vali_loader = data_provider(flag='val')
    test_data, test_loader = data_provider(flag='test')
    path = os.path.join(str(args.checkpoints), 'Autoformer_custom') if checkpoints else None
    if path and not os.path.exists(path):
        os.makedirs(path)
    early_stopping = EarlyStopping(patience=args.patience, verbose=True)
    model_optim = optim.Adam(model.parameters(), lr=args.learning_rate)
    criterion = nn.MSELoss()
    epochs = []
    for epoch in range(args.train_epochs):
        iter_count = 0
        train_loss = []
        model.train()
        for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(train_loader):
            iter_count += 1
            model_optim.zero_grad()
            outputs, batch_y = forward(batch_x, batch_y, batch_x_mark, batch_y_mark)
            loss = criterion(outputs, batch_y)
            train_loss.append(loss.item())
            loss.backward()
            model_optim.step()
        train_loss = np.average(train_loss)
        vali_loss = vali(vali_data, vali_loader, criterion)
        epochs.append([train_loss, float(vali_loss), model_optim.param_groups[0]['lr']])
        if path:
            early_stopping(vali_loss, model, path)
            if early_stopping.early_stop:
                break
        adjust_learning_rate(model_optim, epoch + 1, args)
    result["epochs"] = epochs
    result["conv_grad"] = numpy_of(model.enc_embedding.value_embedding.tokenConv.weight.grad)

    # test()
    if path:
        best_model_path = path + '/' + 'checkpoint.pth'
        model.load_state_dict(torch.load(best_model_path))
    preds, trues = [], []
    model.eval()
    with torch.no_grad():
        for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(test_loader):
            outputs, batch_y = forward(batch_x, batch_y, batch_x_mark, batch_y_mark)
            preds.append(outputs.detach().cpu().numpy())
            trues.append(batch_y.detach().cpu().numpy())
    preds = np.concatenate(preds, axis=0)
    trues = np.concatenate(trues, axis=0)
    result["preds"], result["mse"] = preds, float(np.mean((preds - trues) ** 2))
    return result


@pytest.mark.parametrize("embed", ["timeF", "fixed"])
def test_autoformer_training_and_test(embed):
    ref, got = compare_program(autoformer_program, embed=embed, rtol=1e-3, atol=1e-4)
    assert ref["epochs"][-1][0] < ref["epochs"][0][0]


def test_autoformer_early_stopping_checkpoint(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    compare_program(autoformer_program, train_epochs=2, checkpoints=str(tmp_path / "pt"),
                    mt_options={"checkpoints": str(tmp_path / "mt")}, rtol=1e-3, atol=1e-4)
